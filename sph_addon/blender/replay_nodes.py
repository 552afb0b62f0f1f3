"""The Geometry Nodes groups of the replay objects (see :mod:`.replay` for the two mechanisms).

One shared group per kind (particles, surface) and mechanism; what differs per object
(file pattern, radius, material) is a modifier input. A group is tagged with its kind,
mechanism and :data:`GROUP_VERSION`, so a file saved with older groups gets new ones the
next time :func:`.replay.ensure_replay` runs, with the user's input values carried over.
"""

from __future__ import annotations

import bpy

PARTICLES = "particles"
SURFACE = "surface"
KINDS = (PARTICLES, SURFACE)
MODE_IMPORT = "import_ply"
MODE_HANDLER = "handler"

TAG_GROUP = "sph_replay_group"      # on our node groups: "<kind>/<mode>/<version>"
# 2: First Frame / Last Frame inputs; the frame is clamped to them and nothing is read outside them.
GROUP_VERSION = 2
FIRST, LAST = "First Frame", "Last Frame"


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
    for name, default in ((FIRST, 1), (LAST, 0)):
        frames = iface.new_socket(name, in_out="INPUT", socket_type="NodeSocketInt")
        frames.default_value = default
        frames.description = ("Frames whose files the cache holds (kept up to date by the add-on, saved with "
                              "the file); the replay holds the nearest one outside them, and shows nothing "
                              "when First Frame > Last Frame")
        # State the add-on keeps in step with the cache, not a setting: an edit would be overwritten.
        frames.hide_in_modifier = True
    iface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")

    nodes, links = ng.nodes, ng.links
    group_in = nodes.new("NodeGroupInput")
    group_in.location = (-900, 0)
    if mode == MODE_IMPORT:
        geometry = _import_velocity_chain(ng, group_in)
    else:
        geometry = group_in.outputs["Geometry"]
    x = 0
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


def _import_velocity_chain(ng: bpy.types.NodeTree, group_in: bpy.types.Node) -> bpy.types.NodeSocket:
    """Scene Time -> Clamp -> Float to Int -> Format String -> Import PLY -> Switch -> ``velocity``.

    Import PLY prints ``Invalid PLY header`` for a missing file on every evaluation (in farm
    logs too), so it must never be asked for one: the frame is clamped to First/Last Frame,
    and when the cache holds no file (First > Last) the Switch, which evaluates only the
    input it passes on (verified 4.5.4, 5.0.1), skips the importer. Float to Int rounds (its
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
    links.new(time.outputs["Frame"], clamp.inputs["Value"])
    links.new(group_in.outputs[FIRST], clamp.inputs["Min"])
    links.new(group_in.outputs[LAST], clamp.inputs["Max"])
    links.new(clamp.outputs[0], to_int.inputs[0])
    links.new(to_int.outputs[0], fmt.inputs["frame"])
    links.new(group_in.outputs["Path"], fmt.inputs["Format"])
    links.new(fmt.outputs[0], importer.inputs["Path"])
    baked = nodes.new("FunctionNodeCompare")
    baked.location = (-300, 400)
    baked.operation = 'LESS_EQUAL'  # float comparison: frame numbers are exact in float32
    links.new(group_in.outputs[FIRST], baked.inputs["A"])
    links.new(group_in.outputs[LAST], baked.inputs["B"])
    switch = nodes.new("GeometryNodeSwitch")
    switch.location = (-150, 300)
    switch.input_type = 'GEOMETRY'
    links.new(baked.outputs["Result"], switch.inputs["Switch"])
    links.new(importer.outputs[0], switch.inputs["True"])

    combine = nodes.new("ShaderNodeCombineXYZ")
    combine.location = (-300, -150)
    for i, axis in enumerate("xyz"):
        named = nodes.new("GeometryNodeInputNamedAttribute")
        named.data_type = 'FLOAT'
        named.inputs["Name"].default_value = "v" + axis
        named.location = (-500, -100 - 120 * i)
        links.new(named.outputs["Attribute"], combine.inputs[i])
    store = nodes.new("GeometryNodeStoreNamedAttribute")
    store.location = (-150, 0)
    store.data_type = 'FLOAT_VECTOR'
    store.domain = 'POINT'
    store.inputs["Name"].default_value = "velocity"
    links.new(switch.outputs[0], store.inputs["Geometry"])
    links.new(combine.outputs[0], store.inputs["Value"])
    return store.outputs["Geometry"]
