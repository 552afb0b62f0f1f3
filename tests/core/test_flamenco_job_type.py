"""The Flamenco job type compiles to bake -> mesh chunks -> render chunks with the right commands.

Flamenco runs job types in its own JavaScript engine; here node runs the file with stand-ins for
the few functions Flamenco provides (author.Task/Command, frameChunker), which is enough to check
the task graph and the command lines the workers would run.
"""

import json
import shutil
import subprocess

import pytest
from conftest import REPO

JOB = REPO / "scripts" / "flamenco" / "sph_bake_render.js"

HARNESS = r"""
const fs = require("fs"), vm = require("vm");
const [jobFile, settingsJson] = process.argv.slice(-2);
const tasks = [];
const author = {
  Task: (name, type) => ({ name, type, commands: [], deps: [],
    addCommand(c) { this.commands.push(c); }, addDependency(t) { this.deps.push(t.name); } }),
  Command: (type, params) => ({ type, params }),
};
function frameChunker(frames, size) {
  const [a, b] = frames.split("-").map(Number), out = [];
  for (let s = a; s <= b; s += size) out.push(`${s}-${Math.min(b, s + size - 1)}`);
  return out;
}
const ctx = { author, frameChunker, formatTimestampLocal: () => "now", console };
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(jobFile, "utf8") + "\nthis.JOB_TYPE = JOB_TYPE; this.compileJob = compileJob;", ctx);
const job = { settings: JSON.parse(settingsJson), created: 0, addTask(t) { tasks.push(t); } };
ctx.compileJob(job);
console.log(JSON.stringify({ tasks, settings: ctx.JOB_TYPE.settings.map(s => s.key) }));
"""


@pytest.fixture(scope="module")
def node():
    path = shutil.which("node")
    if path is None:
        pytest.fail("node is needed to check the Flamenco job type (it is on every machine of this project)")
    return path


def compile_job(node, **settings):
    base = {"frames": "1-25", "chunk_size": 10, "domain": "", "resume": False, "blendfile": "/farm/shot.blend",
            "render_output_path": "/farm/render/shot/######"}
    base.update(settings)
    out = subprocess.run([node, "-e", HARNESS, str(JOB), json.dumps(base)], capture_output=True, text=True,
                         timeout=60, check=True)
    return json.loads(out.stdout)


def _argv(command):
    p = command["params"]
    return [*p["argsBefore"], p["blendfile"], *p["args"]]


def test_bake_then_mesh_then_render_per_chunk(node):
    result = compile_job(node)
    names = [t["name"] for t in result["tasks"]]
    assert names == ["sph-bake", "sph-mesh-1-10", "render-1-10", "sph-mesh-11-20", "render-11-20",
                     "sph-mesh-21-25", "render-21-25"]
    tasks = {t["name"]: t for t in result["tasks"]}
    assert _argv(tasks["sph-bake"]["commands"][0]) == ["--command", "sph", "bake", "/farm/shot.blend",
                                                       "--frames", "1-25", "--replace"]
    assert _argv(tasks["sph-mesh-11-20"]["commands"][0]) == ["--command", "sph", "mesh", "/farm/shot.blend",
                                                             "--frames", "11-20"]
    assert tasks["sph-mesh-11-20"]["deps"] == ["sph-bake"]
    assert tasks["render-11-20"]["deps"] == ["sph-mesh-11-20"]
    render = _argv(tasks["render-21-25"]["commands"][0])
    assert render[-2:] == ["--render-frame", "21..25"]


def test_resume_and_domain_reach_the_command(node):
    result = compile_job(node, resume=True, domain="Tank")
    bake = _argv(result["tasks"][0]["commands"][0])
    assert bake[-3:] == ["--auto-resume", "--domain", "Tank"]
    assert "replace" not in " ".join(bake)
