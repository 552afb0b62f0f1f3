"""Operators: ``sph.bake`` (simulate, then mesh), ``sph.bake_data``, ``sph.resume``,
``sph.bake_mesh``, ``sph.free_bake``, ``sph.cancel``, ``sph.export_alembic``, the quick setups and
``sph.convert_rigid_body``.

From the interface (``invoke``) a bake runs on a worker thread and a modal
operator polls it: the progress shows in the Domain panel and the status bar,
Esc cancels after the current frame (the cache stays resumable), errors come
back as reports naming the object and the setting. From scripts and in
headless Blender (``execute``; ``INVOKE_DEFAULT`` runs ``execute`` there too)
the same task runs synchronously.
"""

from __future__ import annotations

import logging

import bpy
from bpy.props import BoolProperty, EnumProperty, IntProperty, StringProperty

from ..core.errors import InputError, SimulationError
from . import alembic, baking, dynamic_colliders, jobs, quick_setup, runtime
from . import properties as props
from .export import snapshot as export
from .export import values as export_values
from .replay import objects as replay

_ERRORS = (InputError, SimulationError, runtime.NumbaUnavailable, OSError)

log = logging.getLogger(__name__)


def _redraw_properties(context) -> None:
    for window in context.window_manager.windows:
        for area in window.screen.areas:
            if area.type in {'PROPERTIES', 'VIEW_3D'}:
                area.tag_redraw()


class _TaskOperator:
    """Shared invoke/modal/execute of operators that run a ``baking.Task``."""

    domain: StringProperty(name="Domain", default="",
                           description="Name of the Domain object; empty = the active or only Domain")
    frame_start: IntProperty(name="Frame Start", default=0, description="First frame; 0 = the Domain's")
    frame_end: IntProperty(name="Frame End", default=0, description="Last frame; 0 = the Domain's")

    _timer = None
    _task_name = ""
    _shown_status = None

    def prepare(self, context) -> baking.Task:
        raise NotImplementedError

    def report_notes(self, task: baking.Task) -> None:
        """What the export decided on the artist's behalf (a Static collider baked as Animated)."""
        for note in task.notes:
            self.report({'WARNING'}, note)

    def done_message(self, task: baking.Task, outcome: jobs.Outcome) -> str:
        return f"{task.kind} of {task.domain_name} finished"

    def refuse_if_busy(self) -> bool:
        """One job at a time per session (jobs.py): report and refuse while one runs."""
        busy = jobs.busy()
        if busy:
            self.report({'ERROR'}, "An SPH bake is already running; wait for it or cancel it (Esc)")
        return busy

    def execute(self, context):
        if self.refuse_if_busy():
            return {'CANCELLED'}
        try:
            task = self.prepare(context)
            self.report_notes(task)
            # Headless (--python-expr on a farm) the console is the only progress display.
            result = baking.run_sync(context.scene, task, echo=baking.console if bpy.app.background else None)
        except _ERRORS as exc:
            self.report({'ERROR'}, str(exc))
            return {'CANCELLED'}
        self.report({'INFO'}, self.done_message(task, jobs.Outcome(result=result)))
        return {'FINISHED'}

    def invoke(self, context, event):
        if bpy.app.background:
            return self.execute(context)
        if self.refuse_if_busy():
            return {'CANCELLED'}
        try:
            task = self.prepare(context)
        except _ERRORS as exc:
            if self.offer_choices(context, exc):
                return {'CANCELLED'}
            self.report({'ERROR'}, str(exc))
            return {'CANCELLED'}
        self.report_notes(task)
        jobs.current = jobs.Job(task)
        jobs.current.start()
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.modal_handler_add(self)
        return {'RUNNING_MODAL'}

    def offer_choices(self, context, exc) -> bool:
        return False

    def modal(self, context, event):
        job = jobs.current
        if event.type == 'ESC' and job is not None and not job.cancelling:
            job.cancel()
            context.workspace.status_text_set("SPH: cancelling after this frame...")
            return {'RUNNING_MODAL'}
        if event.type != 'TIMER' or job is None:
            return {'PASS_THROUGH'}
        outcome = job.poll()
        if job.status is not None and outcome is None:
            context.workspace.status_text_set(f"SPH: {job.status.text()}  (Esc to cancel)")
            _redraw_properties(context)
            if job.status is not self._shown_status:
                # The frames written so far can be watched while the bake goes on.
                self._shown_status = job.status
                domain = context.scene.objects.get(job.task.domain_name)
                if domain is not None:
                    replay.sync_frames(domain)
        if outcome is None:
            return {'PASS_THROUGH'}
        context.window_manager.event_timer_remove(self._timer)
        context.workspace.status_text_set(None)
        jobs.current = None
        try:
            baking.finish(context.scene, job.task)
        except _ERRORS as exc:
            self.report({'WARNING'}, f"the cache could not be shown: {exc}")
        _redraw_properties(context)
        if outcome.error is not None:
            err = outcome.error
            if isinstance(err, InputError):
                err = job.task.explain(err)
            if not isinstance(err, _ERRORS):
                # A bug, not bad input: the report shows one line, the log keeps the worker's traceback.
                log.error("%s of %s failed:\n%s", job.task.kind, job.task.domain_name,
                          getattr(err, "__sph_traceback__", ""))
            self.report({'ERROR'}, str(err))
            return {'CANCELLED'}
        if outcome.cancelled:
            self.report({'WARNING'}, f"{job.task.kind.title()} of {job.task.domain_name} cancelled; "
                                     "Resume continues it")
            return {'CANCELLED'}
        self.report({'INFO'}, self.done_message(job.task, outcome))
        return {'FINISHED'}

    def domain_object(self, context):
        return export.find_domain(context.scene, self.domain)


class _BakeOperator(_TaskOperator):
    """Shared by sph.bake, sph.bake_data and sph.resume (a registered operator class cannot be subclassed)."""

    bl_options = {'REGISTER'}

    replace: BoolProperty(name="Replace", default=False,
                          description="Replace an existing bake in the cache directory (its files are deleted)")

    # Bake and Resume mesh the baked frames too when the Domain's Surface is on (one button gives
    # a watchable result); Bake Data only simulates, as in Mantaflow's modular cache.
    meshes_too = True

    def prepare(self, context):
        domain = self.domain_object(context)
        return baking.prepare_bake(context.scene, domain, self.frame_start, self.frame_end,
                                   resume=self.resume, replace=self.replace,
                                   mesh=self.meshes_too and domain.sph.domain.surface_enabled)

    def offer_choices(self, context, exc) -> bool:
        """An existing bake is never replaced without asking: offer Resume / Replace."""
        if self.resume or self.replace or "already holds a bake" not in str(exc):
            return False
        domain, idname = self.domain, self.bl_idname

        def draw(menu, _context):
            layout = menu.layout
            layout.label(text=str(exc), icon='INFO')
            op = layout.operator(idname, text="Resume", icon='PLAY')
            op.domain, op.resume = domain, True
            op = layout.operator(idname, text="Replace (delete the old bake)", icon='TRASH')
            op.domain, op.replace = domain, True

        context.window_manager.popup_menu(draw, title="This cache directory holds a bake", icon='QUESTION')
        return True

    def done_message(self, task, outcome):
        m = outcome.result or {}
        done = m.get("frames_done", [])
        text = f"Baked {task.domain_name}: {len(done)} frames into {task.cache_dir}"
        if "mesh" in m:
            text += f"; {_mesh_summary(m['mesh'])}"
        return text


class SPH_OT_bake(_BakeOperator, bpy.types.Operator):
    """Simulate the Domain's particles into its cache directory, then mesh their surface (if the Domain's
    Surface is on)"""

    bl_idname = "sph.bake"
    bl_label = "Bake"

    resume: BoolProperty(name="Resume", default=False,
                         description="Continue a bake that was cancelled or killed, from its last checkpoint")


class SPH_OT_bake_data(_BakeOperator, bpy.types.Operator):
    """Simulate the Domain's particles into its cache directory, without meshing (Bake Mesh meshes later)"""

    bl_idname = "sph.bake_data"
    bl_label = "Bake Data"

    resume: BoolProperty(name="Resume", default=False,
                         description="Continue a bake that was cancelled or killed, from its last checkpoint")
    meshes_too = False


class SPH_OT_resume(_BakeOperator, bpy.types.Operator):
    """Continue the Domain's bake from its last checkpoint"""

    bl_idname = "sph.resume"
    bl_label = "Resume Bake"

    resume: BoolProperty(name="Resume", default=True, options={'HIDDEN'})


class SPH_OT_bake_mesh(_TaskOperator, bpy.types.Operator):
    """Mesh the surface of every baked frame with the Domain's surface settings"""

    bl_idname = "sph.bake_mesh"
    bl_label = "Bake Mesh"
    bl_options = {'REGISTER'}

    replace: BoolProperty(name="Replace", default=False,
                          description="Re-mesh frames whose surface is already up to date")

    def prepare(self, context):
        return baking.prepare_mesh(context.scene, self.domain_object(context), self.frame_start, self.frame_end,
                                   replace=self.replace)

    def done_message(self, task, outcome):
        return _mesh_summary(outcome.result or {}).capitalize()


def _mesh_summary(r: dict) -> str:
    text = f"meshed {len(r.get('meshed', []))} frames, {len(r.get('skipped', []))} up to date"
    if r.get("failed"):
        frame, reason = next(iter(r["failed"].items()))
        text += f"; {len(r['failed'])} failed (frame {frame}: {reason})"
    return text


class SPH_OT_free_bake(bpy.types.Operator):
    """Delete the files bakes of this Domain wrote (particles, surfaces, checkpoints); nothing else"""

    bl_idname = "sph.free_bake"
    bl_label = "Free Bake"
    bl_options = {'REGISTER', 'UNDO'}

    domain: StringProperty(name="Domain", default="")

    def execute(self, context):
        if jobs.busy():
            self.report({'ERROR'}, "An SPH bake is running; cancel it before freeing the cache")
            return {'CANCELLED'}
        try:
            n = baking.free(export.find_domain(context.scene, self.domain))
        except _ERRORS as exc:
            self.report({'ERROR'}, str(exc))
            return {'CANCELLED'}
        self.report({'INFO'}, f"Freed {n} files")
        return {'FINISHED'}

    def invoke(self, context, event):
        return context.window_manager.invoke_confirm(self, event)


class SPH_OT_export_alembic(bpy.types.Operator):
    """Write the baked surface (and the particles, if chosen) to an Alembic file, one sample per frame, for other
    programs and for renders without the add-on"""

    bl_idname = "sph.export_alembic"
    bl_label = "Export Alembic"
    bl_options = {'REGISTER'}

    domain: StringProperty(name="Domain", default="",
                           description="Name of the Domain object; empty = the active or only Domain")
    filepath: StringProperty(name="File", subtype='FILE_PATH', default="",
                             description="Alembic file to write; empty = export/<Domain>.abc in the cache directory")
    filter_glob: StringProperty(default="*.abc", options={'HIDDEN'})
    frame_start: IntProperty(name="Frame Start", default=0,
                             description="First frame; 0 = the first baked frame (frames not baked are left out)")
    frame_end: IntProperty(name="Frame End", default=0,
                           description="Last frame; 0 = the last baked frame (frames not baked are left out)")
    surface: BoolProperty(name="Surface", default=True, description="Write the meshed surface")
    particles: BoolProperty(name="Particles", default=False,
                            description="Write the particles too, as the vertices of a mesh with their velocity")
    solids: BoolProperty(name="Solids", default=True,
                         description="Write the Solid objects the bake deformed (their own meshes, as they move)")

    def params(self) -> alembic.AlembicParams:
        return alembic.AlembicParams(self.filepath, self.frame_start, self.frame_end, self.surface, self.particles,
                                     self.solids)

    def execute(self, context):
        if jobs.busy():
            self.report({'ERROR'}, "An SPH bake is running; wait for it or cancel it before exporting")
            return {'CANCELLED'}
        try:
            domain = export.find_domain(context.scene, self.domain)
            done = alembic.export_alembic(context, domain, self.params())
        except _ERRORS as exc:
            self.report({'ERROR'}, str(exc))
            return {'CANCELLED'}
        text = f"Exported {domain.name}: frames {done.frame_start}-{done.frame_end} to {done.path}"
        if done.clamped:
            text += " (frames not baked were left out)"
        self.report({'INFO'}, text)
        return {'FINISHED'}

    def invoke(self, context, event):
        if bpy.app.background:
            return self.execute(context)
        if not self.filepath:
            try:
                self.filepath = str(alembic.default_path(export.find_domain(context.scene, self.domain)))
            except _ERRORS as exc:
                self.report({'ERROR'}, str(exc))
                return {'CANCELLED'}
        context.window_manager.fileselect_add(self)
        return {'RUNNING_MODAL'}


class SPH_OT_cancel(bpy.types.Operator):
    """Stop the running bake after the current frame; Resume continues it"""

    bl_idname = "sph.cancel"
    bl_label = "Cancel Bake"

    def execute(self, context):
        if jobs.current is not None:
            jobs.current.cancel()
        return {'FINISHED'}


class SPH_OT_make_domain(bpy.types.Operator):
    """Add a Domain box around the selected objects"""

    bl_idname = "sph.make_domain"
    bl_label = "Make Domain"
    bl_options = {'REGISTER', 'UNDO'}

    def execute(self, context):
        ob = quick_setup.make_domain(context, list(context.selected_objects))
        self.report({'INFO'}, f"Added Domain {ob.name}")
        return {'FINISHED'}


class SPH_OT_quick_fluid(bpy.types.Operator):
    """Make the selected meshes a fluid with a material preset, and a Domain around them if there is none"""

    bl_idname = "sph.quick_fluid"
    bl_label = "Quick Fluid"
    bl_options = {'REGISTER', 'UNDO'}

    preset: EnumProperty(name="Preset", items=[("water", "Quick Liquid", "Water"),
                                               ("honey", "Quick Goo", "Honey (coiling, viscous)"),
                                               ("jelly", "Quick Jelly", "An elastic solid that wobbles")])

    def execute(self, context):
        fluids = [ob for ob in context.selected_objects if ob.type == 'MESH' and ob.sph.role == 'NONE']
        if not fluids:
            self.report({'ERROR'}, "Select one or more mesh objects to fill with particles")
            return {'CANCELLED'}
        solid = self.preset == "jelly" and props.SOLID_MODEL in props.SOLVERS
        for ob in fluids:
            if solid:
                # A jelly is a Solid: the object itself wobbles, rendered as it is (its own mesh deformed).
                ob.sph.role = 'SOLID'
                props.choose_preset(ob.sph.material, self.preset, props.SOLID_MODEL)
                continue
            ob.sph.role = 'FLUID'
            props.choose_preset(ob.sph.material, self.preset)
            ob.display_type = 'WIRE'
            ob.hide_render = True
        if not export.domains(context.scene):
            domain = quick_setup.make_domain(context, fluids, margin=1.0)
            if solid:  # the objects render themselves: a surface of their particles would show them twice
                domain.sph.domain.surface_enabled = False
        what = "solid" if solid else "fluid"
        self.report({'INFO'}, f"{len(fluids)} {what} objects ({self.preset}); Bake from the Domain")
        return {'FINISHED'}


class SPH_OT_convert_rigid_body(bpy.types.Operator):
    """Make the selected objects of Blender's rigid-body world Dynamic Colliders (mass, friction and
    bounciness kept; the density is the mass over the mesh's volume); their rigid bodies are removed"""

    bl_idname = "sph.convert_rigid_body"
    bl_label = "Convert Rigid Body to Dynamic Collider"
    bl_options = {'REGISTER', 'UNDO'}

    def execute(self, context):
        chosen = {*context.selected_objects, *([context.object] if context.object else [])}
        bodies = sorted((ob for ob in chosen if dynamic_colliders.convertible(ob)), key=lambda ob: ob.name)
        if not bodies:
            self.report({'ERROR'}, "Select mesh objects with an Active rigid body (Physics > Rigid Body)")
            return {'CANCELLED'}
        domains = export.domains(context.scene)
        unit = export_values.unit_scale(context.scene, domains[0]) if domains else 1.0
        for ob in bodies:
            try:
                self.report({'INFO'}, dynamic_colliders.convert_rigid_body(context, ob, unit))
            except _ERRORS as exc:
                self.report({'ERROR'}, str(exc))
                return {'CANCELLED'}
        return {'FINISHED'}


_classes = (SPH_OT_bake, SPH_OT_bake_data, SPH_OT_resume, SPH_OT_bake_mesh, SPH_OT_free_bake, SPH_OT_export_alembic,
            SPH_OT_cancel,
            SPH_OT_make_domain, SPH_OT_quick_fluid, SPH_OT_convert_rigid_body)


register, unregister = bpy.utils.register_classes_factory(_classes)
