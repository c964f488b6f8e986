"""Mitsuba 3 scene dicts (the ones `kr.load_dict` and `mi.load_dict` read) written as Mitsuba 3
XML scene files, for programs that load files only (the device check's C++ renderer check).

    python scripts/scene_xml.py OUT_DIR    writes OUT_DIR/<name>.xml for every reference scene
                                           of tests/render/scenes.py, with its assets in
                                           OUT_DIR/data, OUT_DIR/grad_<name>.xml for the
                                           gradient references' scenes (grad_scenes.py, prb)
                                           and OUT_DIR/cornell_512.xml

Values map as Mitsuba's own dict loader reads them: a nested dict with a `type` is a plugin
(its XML tag from the plugin's kind), `{"type": "rgb", "value": ...}` an <rgb>, a 4 x 4
nested list a <transform> with its <matrix>, a list of three numbers a <point> (<vector> for
directions), and booleans, integers, floats and strings their own tags.
"""

import shutil
import sys
from pathlib import Path
from xml.sax.saxutils import quoteattr

ROOT = Path(__file__).resolve().parents[1]

#: The XML tag of each plugin type kiln.render has.
TAGS = {
    **dict.fromkeys(["obj", "ply", "rectangle", "cube", "disk", "sphere"], "shape"),
    **dict.fromkeys(["diffuse", "conductor", "roughconductor", "dielectric", "thindielectric", "roughdielectric",
                     "plastic", "roughplastic", "twosided", "blendbsdf"], "bsdf"),
    **dict.fromkeys(["bitmap", "checkerboard", "uniform", "mesh_attribute"], "texture"),
    **dict.fromkeys(["area", "directionalarea", "point", "spot", "constant", "envmap", "directional"], "emitter"),
    **dict.fromkeys(["box", "tent", "gaussian"], "rfilter"),
    **dict.fromkeys(["path", "prb", "direct", "aov", "ptracer", "direct_projective", "prb_projective"], "integrator"),
    "perspective": "sensor", "hdrfilm": "film", "independent": "sampler", "scene": "scene",
}
#: Three-number parameters that are directions, not points.
VECTORS = {"direction", "up"}


def is_matrix(value):
    return isinstance(value, (list, tuple)) and len(value) == 4 and all(
        isinstance(row, (list, tuple)) and len(row) == 4 for row in value)


def numbers(values):
    return ", ".join(repr(float(v)) for v in values)


def element(name, value, indent):
    """The XML lines of one dict entry."""
    pad, attr = " " * indent, f"name={quoteattr(name)}"
    if isinstance(value, dict) and value.get("type") == "rgb":
        rgb = value["value"]
        return [f'{pad}<rgb {attr} value="{numbers(rgb if isinstance(rgb, (list, tuple)) else [rgb] * 3)}"/>']
    if isinstance(value, dict):
        return plugin(value, indent, name)
    if isinstance(value, bool):
        return [f'{pad}<boolean {attr} value="{str(value).lower()}"/>']
    if isinstance(value, int):
        return [f'{pad}<integer {attr} value="{value}"/>']
    if isinstance(value, float):
        return [f'{pad}<float {attr} value="{value!r}"/>']
    if isinstance(value, str):
        return [f"{pad}<string {attr} value={quoteattr(value)}/>"]
    if is_matrix(value):
        flat = [entry for row in value for entry in row]
        return [f"{pad}<transform {attr}>", f'{pad}    <matrix value="{numbers(flat)}"/>', f"{pad}</transform>"]
    if isinstance(value, (list, tuple)) and len(value) == 3:
        tag = "vector" if name in VECTORS else "point"
        return [f'{pad}<{tag} {attr} x="{float(value[0])!r}" y="{float(value[1])!r}" z="{float(value[2])!r}"/>']
    raise ValueError(f"scene_xml: {name}: no XML form for {value!r}")


def plugin(node, indent=0, name=None):
    """The XML lines of a plugin dict; `name` is its key in the parent: the id of a plugin
    declared in the scene, the parameter name of a nested one."""
    kind = node["type"]
    if kind not in TAGS:
        raise ValueError(f"scene_xml: unknown plugin type {kind!r}")
    pad, tag = " " * indent, TAGS[kind]
    attributes = ' version="3.0.0"' if tag == "scene" else f" type={quoteattr(kind)}"
    if name is not None:
        attributes += f" {'id' if indent == 4 else 'name'}={quoteattr(name)}"
    lines = [f"{pad}<{tag}{attributes}>"]
    for key, value in node.items():
        if key != "type":
            lines += element(key, value, indent + 4)
    return lines + [f"{pad}</{tag}>"]


def to_xml(scene):
    """A scene dict as the text of a Mitsuba 3 XML file."""
    return "\n".join(plugin(scene)) + "\n"


def main(out_dir):
    sys.path.insert(0, str(ROOT / "tests" / "render"))
    sys.path.insert(0, str(ROOT / "examples" / "scenes"))
    import grad_scenes
    import render_scenes
    import scenes

    out = Path(out_dir)
    shutil.copytree(scenes.DATA_DIR, out / "data", dirs_exist_ok=True)
    for name, make in scenes.SCENES.items():
        (out / f"{name}.xml").write_text(to_xml(make(Path("data"))))
    for name in grad_scenes.CASES:
        scene = grad_scenes.scene(name)
        (out / f"grad_{name}.xml").write_text(to_xml(scene).replace(str(scenes.DATA_DIR), "data"))
    (out / "cornell_512.xml").write_text(to_xml(render_scenes.cornell_box(512, 512)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
