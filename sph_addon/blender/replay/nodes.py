"""The Geometry Nodes groups of the replay objects (see :mod:`.replay` for the two mechanisms).

One shared group per kind (particles, surface) and mechanism; what differs per object
(file pattern, radius, material) is a modifier input. A group is tagged with its kind,
mechanism and :data:`GROUP_VERSION`, so a file saved with older groups gets new ones the
next time :func:`.replay.ensure_replay` runs, with the user's input values carried over.
"""

from __future__ import annotations

import bpy

from .frames import SHADER_TEMPERATURE, model_fields

PARTICLES = "particles"
SURFACE = "surface"
KINDS = (PARTICLES, SURFACE)
MODE_IMPORT = "import_ply"
MODE_HANDLER = "handler"

TAG_GROUP = "sph_replay_group"      # on our node groups: "<kind>/<mode>/<version>"
# 2: First Frame / Last Frame inputs; the frame is clamped to them and nothing is read outside them.
# 3: integer id and material, speed; vx vy vz and particle_id removed.
# 4: Time Scale input: velocity in timeline seconds (motion blur in slow motion); nothing before the
#    first frame with particles; Render First/Last Frame (a farm's expected surfaces, renders only).
# 5: the models' integer cache fields (the sph model's time_level) stored as integers where present.
# 6: ``temperature`` also stored as ``temperature_celsius`` where present (Cycles' name: replay_frames).
GROUP_VERSION = 6
FIRST, LAST = "First Frame", "Last Frame"
RENDER_FIRST, RENDER_LAST = "Render First Frame", "Render Last Frame"
TIME_SCALE = "Time Scale"


def ensure_group(kind: str, mode: str) -> bpy.types.NodeTree:
    """The shared node group of one kind and mode (per-object settings are modifier inputs)."""
    key = f"{kind}/{mode}/{GROUP_VERSION}"
    for ng in bpy.data.node_groups:
        if ng.get(TAG_GROUP) == key and ng.library is None:
            return ng
    return _build_group(kind, mode, key)


def _build_group(kind: str, mode: str, key: str) -> bpy.types.NodeTree:
    """Build the node group: a geometry source, velocity, shading or points, material.

    Import mode reads the file here (BLENDER_NOTES.md section 7: Format String, not Join
    Strings, whose multi-input links concatenate in reverse creation order); handler mode
    takes the mesh the frame handler wrote, which already carries ``velocity``.
    """
    label = "Particles" if kind == PARTICLES else "Surface"
    ng = bpy.data.node_groups.new(f"SPH Replay {label}" + (" (Handler)" if mode == MODE_HANDLER else ""),
                                  "GeometryNodeTree")
    ng[TAG_GROUP] = key
    iface = ng.interface
    if mode == MODE_HANDLER:
        iface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    else:
        path = iface.new_socket("Path", in_out="INPUT", socket_type="NodeSocketString")
        path.description = "PLY file of each frame: Format String pattern, {frame:04} = frame, // = beside the .blend"
    if kind == PARTICLES:
        radius = iface.new_socket("Radius", in_out="INPUT", socket_type="NodeSocketFloat")
        radius.subtype = 'DISTANCE'
        radius.min_value, radius.default_value = 0.0, 0.01
        radius.description = "Radius of the rendered particle spheres"
    mat = iface.new_socket("Material", in_out="INPUT", socket_type="NodeSocketMaterial")
    mat.description = "Material of the replay (object material slots do not reach generated geometry)"
    frame_inputs = ((FIRST, 1), (LAST, 0)) + (((RENDER_FIRST, 1), (RENDER_LAST, 0)) if mode == MODE_IMPORT else ())
    for name, default in frame_inputs:
        frames = iface.new_socket(name, in_out="INPUT", socket_type="NodeSocketInt")
        frames.default_value = default
        frames.description = (
            "Frames a farm render reads once its meshing tasks ran, when First <= Last (set by the farm's bake, "
            "cleared when the add-on re-reads the cache)" if name in (RENDER_FIRST, RENDER_LAST) else
            "First and last frames with particles in the cache's files (kept up to date by the add-on, saved "
            "with the file); the replay shows nothing before the first, holds the last after it, and shows "
            "nothing when First Frame > Last Frame")
        # State the add-on keeps in step with the cache, not a setting: an edit would be overwritten.
        frames.hide_in_modifier = True
    scale = iface.new_socket(TIME_SCALE, in_out="INPUT", socket_type="NodeSocketFloat")
    scale.default_value, scale.min_value = 1.0, 1e-6
    scale.description = ("The bake's time scale (seconds of physics per second of the timeline, kept by the "
                         "add-on): velocity is multiplied by it, so motion blur spans what moves in one shutter "
                         "of the timeline; speed stays physical")
    scale.hide_in_modifier = True
    iface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")

    nodes, links = ng.nodes, ng.links
    group_in = nodes.new("NodeGroupInput")
    group_in.location = (-1300, 0)
    if mode == MODE_IMPORT:
        geometry = _attribute_chain(ng, _import_chain(ng, group_in), kind, group_in.outputs[TIME_SCALE])
        x = 1800  # right of the attribute chain
    else:
        velocity = _named(ng, "velocity", 'FLOAT_VECTOR', (-500, -200))
        geometry = _store(ng, group_in.outputs["Geometry"], "velocity", 'FLOAT_VECTOR',
                          _scaled(ng, velocity.outputs["Attribute"], group_in.outputs[TIME_SCALE], (-300, -200)), -100)
        x = 100
    if kind == PARTICLES:
        to_points = nodes.new("GeometryNodeMeshToPoints")
        to_points.location = (x, 0)
        links.new(geometry, to_points.inputs["Mesh"])
        links.new(group_in.outputs["Radius"], to_points.inputs["Radius"])
        geometry = to_points.outputs["Points"]
    else:
        # Files written without normals import flat-shaded; a meshed liquid should look smooth.
        smooth = nodes.new("GeometryNodeSetShadeSmooth")
        smooth.location = (x, 0)
        links.new(geometry, smooth.inputs["Geometry"])
        geometry = smooth.outputs["Geometry"]
    set_mat = nodes.new("GeometryNodeSetMaterial")
    set_mat.location = (x + 200, 0)
    links.new(geometry, set_mat.inputs["Geometry"])
    links.new(group_in.outputs["Material"], set_mat.inputs["Material"])
    group_out = nodes.new("NodeGroupOutput")
    group_out.location = (x + 400, 0)
    links.new(set_mat.outputs["Geometry"], group_out.inputs["Geometry"])
    return ng


def _import_chain(ng: bpy.types.NodeTree, group_in: bpy.types.Node) -> bpy.types.NodeSocket:
    """Scene Time -> Clamp -> Float to Int -> Format String -> Import PLY -> Switch: the frame's file.

    Import PLY prints ``Invalid PLY header`` for a missing file, and ``no vertices`` for an
    empty one, on every evaluation (in farm logs too), so it must never be asked for either:
    the frame is clamped to First/Last Frame (the cache's first and last frames with
    particles), and before First Frame, or when the cache holds none (First > Last), the
    Switch, which evaluates only the input it passes on (verified 4.5.4, 5.0.1), skips the
    importer. Renders read Render First/Last Frame instead when set (First <= Last): the
    frames a farm's meshing tasks will write, which the viewport evaluation made while the
    farm's bake saves the file must not read yet (Is Viewport). Float to Int rounds (its
    default), so the sub-frames Cycles evaluates for motion blur read the nearest frame's
    file; extra PLY vertex properties arrive as FLOAT point attributes named like the
    properties (verified 4.5.4, 5.0.1).
    """
    nodes, links = ng.nodes, ng.links
    time = nodes.new("GeometryNodeInputSceneTime")
    time.location = (-1100, 200)
    clamp = nodes.new("ShaderNodeClamp")
    clamp.location = (-900, 200)
    to_int = nodes.new("FunctionNodeFloatToInt")
    to_int.location = (-700, 200)
    fmt = nodes.new("FunctionNodeFormatString")
    fmt.location = (-500, 200)
    fmt.format_items.new('INT', "frame")
    importer = nodes.new("GeometryNodeImportPLY")
    importer.location = (-300, 200)
    first, last = _frames_read(ng, group_in)
    links.new(time.outputs["Frame"], clamp.inputs["Value"])
    links.new(first, clamp.inputs["Min"])
    links.new(last, clamp.inputs["Max"])
    links.new(clamp.outputs[0], to_int.inputs[0])
    links.new(to_int.outputs[0], fmt.inputs["frame"])
    links.new(group_in.outputs["Path"], fmt.inputs["Format"])
    links.new(fmt.outputs[0], importer.inputs["Path"])
    baked = _compare(ng, 'LESS_EQUAL', first, last, (-300, 400))  # float: frame numbers are exact in float32
    started = _compare(ng, 'GREATER_EQUAL', time.outputs["Frame"], first, (-300, 550))
    both = nodes.new("FunctionNodeBooleanMath")
    both.operation = 'AND'
    both.location = (-150, 450)
    links.new(baked.outputs["Result"], both.inputs[0])
    links.new(started.outputs["Result"], both.inputs[1])
    switch = nodes.new("GeometryNodeSwitch")
    switch.location = (-150, 300)
    switch.input_type = 'GEOMETRY'
    links.new(both.outputs[0], switch.inputs["Switch"])
    links.new(importer.outputs[0], switch.inputs["True"])

    return switch.outputs[0]


def _compare(ng: bpy.types.NodeTree, operation: str, a, b, location) -> bpy.types.Node:
    node = ng.nodes.new("FunctionNodeCompare")
    node.operation = operation
    node.location = location
    ng.links.new(a, node.inputs["A"])
    ng.links.new(b, node.inputs["B"])
    return node


def _frames_read(ng: bpy.types.NodeTree, group_in: bpy.types.Node) -> tuple:
    """(first, last) frame sockets: Render First/Last in a render when set, else First/Last."""
    nodes, links = ng.nodes, ng.links
    viewport = nodes.new("GeometryNodeIsViewport")
    viewport.location = (-1100, 650)
    render_set = _compare(ng, 'LESS_EQUAL', group_in.outputs[RENDER_FIRST], group_in.outputs[RENDER_LAST],
                          (-1100, 800))
    use_render = nodes.new("FunctionNodeBooleanMath")
    use_render.operation = 'NIMPLY'  # set and not in the viewport
    use_render.location = (-900, 700)
    links.new(render_set.outputs["Result"], use_render.inputs[0])
    links.new(viewport.outputs[0], use_render.inputs[1])
    out = []
    for k, (name, render_name) in enumerate(((FIRST, RENDER_FIRST), (LAST, RENDER_LAST))):
        pick = nodes.new("GeometryNodeSwitch")
        pick.input_type = 'INT'
        pick.location = (-700, 700 - 150 * k)
        links.new(use_render.outputs[0], pick.inputs["Switch"])
        links.new(group_in.outputs[name], pick.inputs["False"])
        links.new(group_in.outputs[render_name], pick.inputs["True"])
        out.append(pick.outputs[0])
    return out[0], out[1]


def _named(ng: bpy.types.NodeTree, name: str, data_type: str, location) -> bpy.types.Node:
    node = ng.nodes.new("GeometryNodeInputNamedAttribute")
    node.data_type = data_type
    node.inputs["Name"].default_value = name
    node.location = location
    return node


def _store(ng: bpy.types.NodeTree, geometry, name: str, data_type: str, value, x: int) -> bpy.types.NodeSocket:
    store = ng.nodes.new("GeometryNodeStoreNamedAttribute")
    store.location = (x, 0)
    store.data_type = data_type
    store.domain = 'POINT'
    store.inputs["Name"].default_value = name
    ng.links.new(geometry, store.inputs["Geometry"])
    ng.links.new(value, store.inputs["Value"])
    return store.outputs["Geometry"]


def _scaled(ng: bpy.types.NodeTree, vector: bpy.types.NodeSocket, factor: bpy.types.NodeSocket,
            location) -> bpy.types.NodeSocket:
    scale = ng.nodes.new("ShaderNodeVectorMath")
    scale.operation = 'SCALE'
    scale.location = location
    ng.links.new(vector, scale.inputs[0])
    ng.links.new(factor, scale.inputs["Scale"])
    return scale.outputs["Vector"]


def _store_if_present(ng: bpy.types.NodeTree, geometry: bpy.types.NodeSocket, name: str, data_type: str,
                      x: int, stored_as: str | None = None) -> bpy.types.NodeSocket:
    """The imported attribute ``name`` stored again as ``data_type`` (under ``stored_as``, or its own name) where
    the file has it; a file without it (a bake without that model) gets no attribute rather than zeros."""
    read = _named(ng, name, data_type, (x - 200, -200))
    stored = _store(ng, geometry, stored_as or name, data_type, read.outputs["Attribute"], x)
    return _where_any(ng, geometry, stored, read.outputs["Exists"], x)


def _where_any(ng: bpy.types.NodeTree, geometry: bpy.types.NodeSocket, stored: bpy.types.NodeSocket,
               exists: bpy.types.NodeSocket, x: int) -> bpy.types.NodeSocket:
    """``stored`` where some point has ``exists`` true, else ``geometry`` unchanged. Exists is a field; a
    geometry Switch needs one value: "some point has it" (its maximum)."""
    nodes, links = ng.nodes, ng.links
    stats = nodes.new("GeometryNodeAttributeStatistic")
    stats.location = (x, -350)
    links.new(geometry, stats.inputs["Geometry"])
    links.new(exists, stats.inputs["Attribute"])
    present = nodes.new("GeometryNodeSwitch")
    present.input_type = 'GEOMETRY'
    present.location = (x + 200, 0)
    links.new(stats.outputs["Max"], present.inputs["Switch"])
    links.new(geometry, present.inputs["False"])
    links.new(stored, present.inputs["True"])
    return present.outputs[0]


def _attribute_chain(ng: bpy.types.NodeTree, geometry: bpy.types.NodeSocket, kind: str,
                     time_scale: bpy.types.NodeSocket) -> bpy.types.NodeSocket:
    """The imported PLY properties as the attributes a shader or Geometry Nodes wants (4.5+).

    Import PLY makes every extra vertex property a FLOAT point attribute (verified 4.5.4,
    5.0.1): ``velocity`` is stored once from ``vx vy vz`` times ``time_scale`` (timeline
    seconds: Cycles motion blur reads it), which are then removed; ``speed`` is the physical
    speed (m/s, for shading); ``material`` becomes an integer. On
    particles, ``id`` becomes an integer from ``particle_id`` (4.5 drops a float ``id``,
    the name being reserved for integers; 5.0 keeps it) or, in caches written before
    ``particle_id``, from ``id``; a cache with neither gets none. ``age`` (seconds) arrives
    as it should, and so does each model's float cache field; an integer one (``time_level``)
    becomes an integer where the file has it (``replay_frames.model_fields``); ``temperature`` is also
    stored as ``temperature_celsius``, the name a shader can read (``replay_frames.SHADER_TEMPERATURE``).
    """
    nodes, links = ng.nodes, ng.links
    x = -100
    combine = nodes.new("ShaderNodeCombineXYZ")
    combine.location = (x - 200, -200)
    for i, axis in enumerate("xyz"):
        links.new(_named(ng, "v" + axis, 'FLOAT', (x - 400, -150 - 120 * i)).outputs["Attribute"], combine.inputs[i])
    geometry = _store(ng, geometry, "velocity", 'FLOAT_VECTOR',
                      _scaled(ng, combine.outputs[0], time_scale, (x - 100, -400)), x)
    length = nodes.new("ShaderNodeVectorMath")
    length.operation = 'LENGTH'
    length.location = (x, -200)
    links.new(combine.outputs[0], length.inputs[0])
    geometry = _store(ng, geometry, "speed", 'FLOAT', length.outputs["Value"], x + 200)
    material = _named(ng, "material", 'INT', (x + 200, -200))
    geometry = _store(ng, geometry, "material", 'INT', material.outputs["Attribute"], x + 400)
    x += 600
    removed = ["vx", "vy", "vz"]
    if kind == PARTICLES:
        new_id = _named(ng, "particle_id", 'INT', (x - 200, -200))
        old_id = _named(ng, "id", 'INT', (x - 200, -350))
        which = nodes.new("GeometryNodeSwitch")
        which.input_type = 'INT'
        which.location = (x, -200)
        links.new(new_id.outputs["Exists"], which.inputs["Switch"])
        links.new(old_id.outputs["Attribute"], which.inputs["False"])
        links.new(new_id.outputs["Attribute"], which.inputs["True"])
        stored = _store(ng, geometry, "id", 'INT', which.outputs[0], x + 200)
        either = nodes.new("FunctionNodeBooleanMath")
        either.operation = 'OR'
        either.location = (x + 200, -350)
        links.new(new_id.outputs["Exists"], either.inputs[0])
        links.new(old_id.outputs["Exists"], either.inputs[1])
        geometry = _where_any(ng, geometry, stored, either.outputs[0], x + 200)
        removed.append("particle_id")
        x += 600
        for name, data_type in model_fields().items():
            if data_type != 'FLOAT':  # a float field arrives as it should
                geometry = _store_if_present(ng, geometry, name, data_type, x)
                x += 600
    geometry = _store_if_present(ng, geometry, "temperature", 'FLOAT', x, stored_as=SHADER_TEMPERATURE)
    x += 600
    for name in removed:
        remove = nodes.new("GeometryNodeRemoveAttribute")
        remove.location = (x, 0)
        remove.inputs["Name"].default_value = name
        links.new(geometry, remove.inputs["Geometry"])
        geometry = remove.outputs["Geometry"]
        x += 200
    return geometry
