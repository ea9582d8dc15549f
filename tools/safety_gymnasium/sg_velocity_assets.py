"""Writes crax's Safety-Gymnasium velocity bodies' MJCF from Safety-Gymnasium 1.0.0's own models.

Run with the Python 3.10 environment that has ``safety-gymnasium==1.0.0`` (docs/safety_gymnasium.md),
from the repository root::

    /work/sg-venv/bin/python tools/safety_gymnasium/sg_velocity_assets.py    # writes crax/bodies/assets/safety_<agent>.xml

Safety-Gymnasium's Velocity-v1 tasks run Gymnasium's MuJoCo v4 models (``gymnasium/envs/mujoco/assets``),
some of which use ``coordinate="global"``, which MuJoCo 3 and later no longer read. Each model is
loaded by Safety-Gymnasium (MuJoCo 2.3.3) and saved again with ``mj_saveLastXML``, which writes it in
local coordinates and radians, and each body is given the inertia MuJoCo 2.3.3 computed for it
(an explicit ``<inertial>``: mj_saveLastXML leaves out HalfCheetah's ``settotalmass``), and a body
without a name (Ant's shins) is named ``body<id>`` (crax finds the agent's bodies and joints by
name); then what crax's scene provides is taken out (the floor, whose
contact parameters the body class keeps, the light, textures, materials, cameras, ``<option>``,
whose values the body class keeps too, ``<visual>``, ``<size>``, ``<custom>``). Bodies, joints,
geoms, defaults, tendons and actuators are Safety-Gymnasium's, to the 6 significant digits
``mj_saveLastXML`` writes.
"""

from __future__ import annotations

import pathlib
import sys
import tempfile
import xml.etree.ElementTree as ET

import mujoco
import safety_gymnasium

AGENTS = {"Ant": "ant", "HalfCheetah": "half_cheetah", "Hopper": "hopper", "Humanoid": "humanoid",
          "Swimmer": "swimmer", "Walker2d": "walker2d"}
ASSETS = pathlib.Path(__file__).resolve().parents[2] / "crax" / "bodies" / "assets"
DROP = ("option", "visual", "asset", "size", "custom", "statistic", "keyframe")


def _num(x) -> str:
    return " ".join(f"{v:.9g}" for v in list(getattr(x, "ravel", lambda: [x])()))


def convert(agent: str) -> str:
    env = safety_gymnasium.make(f"Safety{agent}Velocity-v1")
    m = env.unwrapped.model
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "model.xml"
        mujoco.mj_saveLastXML(str(path), m)
        root = ET.parse(path).getroot()
    bodies = list(root.iter("body"))  # in the model's order: body ids 1, 2, ... (some have no name)
    assert len(bodies) == m.nbody - 1
    for i, body in enumerate(bodies, start=1):  # the inertias MuJoCo 2.3.3 computed (HalfCheetah's settotalmass included)
        b = m.body(i)
        assert body.get("name") in (None, b.name)
        if body.get("name") is None:  # crax finds the agent's bodies by name (Ant's shins have none)
            body.set("name", f"body{i}")
        inertial = ET.Element("inertial", pos=_num(b.ipos), quat=_num(b.iquat), mass=_num(b.mass),
                              diaginertia=_num(b.inertia))
        body.insert(0, inertial)
    for tag in DROP:
        for el in root.findall(tag):
            root.remove(el)
    world = root.find("worldbody")
    assert world is not None
    for el in list(world):
        if el.tag in ("light", "camera") or (el.tag == "geom" and el.get("name") == "floor"):
            world.remove(el)
    for parent in root.iter():
        for el in list(parent):
            if el.tag == "camera":
                parent.remove(el)
        parent.attrib.pop("material", None)
    ET.indent(root, space="  ")
    source = f"gymnasium/envs/mujoco/assets/{AGENTS[agent]}.xml"
    header = (f"<!-- Safety-Gymnasium 1.0.0's {agent} (Safety{agent}Velocity-v1: Gymnasium's {source}), as MuJoCo 2.3.3\n"
              "     saved it (mj_saveLastXML: local coordinates, radians; each body's inertia as 2.3.3 computed it), without floor, light, cameras, materials\n"
              "     and <option>. Written by tools/safety_gymnasium/sg_velocity_assets.py; do not edit by hand. -->\n")
    return header + ET.tostring(root, encoding="unicode") + "\n"


def main() -> None:
    for agent, stem in AGENTS.items():
        out = ASSETS / f"safety_{stem}.xml"
        out.write_text(convert(agent))
        print("wrote", out, file=sys.stderr)


if __name__ == "__main__":
    main()
