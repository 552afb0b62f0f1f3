// SPDX-License-Identifier: GPL-3.0-or-later
// Flamenco 3 job type: bake an SPH Domain, mesh its frames in parallel chunks, render.
// Copy into the `scripts/` folder beside flamenco-manager and restart the Manager.
//
// One bake task (the simulation is sequential in time and resumable), then per chunk of frames
// a mesh task (frames are independent) and a render task that depends on that chunk's mesh.
// Every command is `blender --command sph ... FILE.blend`, which needs the sph_addon extension
// installed on the workers (`blender --command extension install-file sph_addon-<ver>-linux_x64.zip
// -r user_default -e`). Rendering needs no add-on on Blender 4.5+ (Geometry Nodes read the cache).

const JOB_TYPE = {
  label: "SPH Bake, Mesh and Render",
  settings: [
    { key: "frames", type: "string", required: true,
      eval: "f'{C.scene.frame_start}-{C.scene.frame_end}'",
      description: "Frames to bake, mesh and render (A-B)" },
    { key: "chunk_size", type: "int32", default: 10,
      description: "Frames per mesh and render task" },
    { key: "domain", type: "string", default: "",
      description: "Domain object name (empty: the only Domain in the file)" },
    { key: "resume", type: "bool", default: true,
      description: "Continue an interrupted bake of the same scene (a retried task resumes); off: start over" },
    { key: "render_output_path", type: "string", subtype: "file_path", editable: false,
      eval: "str(Path(abspath(settings.render_output_root), last_n_dir_parts(settings.add_path_components), jobname, '######'))",
      description: "Final file path of where render output will be saved" },
    { key: "render_output_root", type: "string", subtype: "dir_path", required: true, visible: "submission",
      description: "Base directory of where render output is stored" },
    { key: "add_path_components", type: "int32", required: true, default: 0, propargs: { min: 0, max: 32 },
      visible: "submission", description: "Number of path components of the .blend file to use in the render path" },
    { key: "blendfile", type: "string", required: true, visible: "web",
      description: "Path of the .blend file; the SPH cache directory should be '//'-relative beside it" },
  ],
};

function sphCommand(settings, verb, args) {
  const before = ["--command", "sph", verb];
  const after = settings.domain ? args.concat(["--domain", settings.domain]) : args;
  // blender-render runs: {exe} {exeArgs} argsBefore blendfile args
  return author.Command("blender-render", {
    exe: "{blender}",
    exeArgs: "",
    argsBefore: before,
    blendfile: settings.blendfile,
    args: after,
  });
}

function compileJob(job) {
  const settings = job.settings;
  const bake = author.Task("sph-bake", "blender");
  const bakeArgs = ["--frames", settings.frames];
  bake.addCommand(sphCommand(settings, "bake", settings.resume ? bakeArgs.concat(["--auto-resume"]) : bakeArgs.concat(["--replace"])));
  job.addTask(bake);

  const renderOutput = renderOutputPath(job);
  for (const chunk of frameChunker(settings.frames, settings.chunk_size)) {
    const mesh = author.Task(`sph-mesh-${chunk}`, "blender");
    mesh.addCommand(sphCommand(settings, "mesh", ["--frames", chunk]));  // chunks are "A-B"
    mesh.addDependency(bake);
    job.addTask(mesh);

    const render = author.Task(`render-${chunk}`, "blender");
    render.addCommand(author.Command("blender-render", {
      exe: "{blender}",
      exeArgs: "{blenderArgs}",
      argsBefore: [],
      blendfile: settings.blendfile,
      args: ["--render-output", renderOutput, "--render-frame", chunk.replace("-", "..")],
    }));
    render.addDependency(mesh);
    job.addTask(render);
  }
}

function renderOutputPath(job) {
  let path = job.settings.render_output_path;
  if (!path) {
    throw "no render_output_path setting!";
  }
  return path.replace(/{timestamp}/g, formatTimestampLocal(job.created));
}
