"""scripts/scene_xml.py (scene dicts written as Mitsuba 3 XML, for the device check's C++
renderer check): every reference scene's XML file loads and renders the same image as its
dict, bit for bit."""

import sys
from pathlib import Path

import numpy as np
import pytest

import kiln.render as kr

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests" / "render"))
import scene_xml  # noqa: E402
import scenes  # noqa: E402


@pytest.fixture(scope="module")
def xml_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("xml")
    scene_xml.main(out)
    return out


@pytest.mark.parametrize("name", list(scenes.SCENES))
def test_the_xml_file_renders_as_the_dict(name, xml_dir):
    description = scenes.SCENES[name](xml_dir / "data")
    from_dict = np.asarray(kr.render(kr.load_dict(description), spp=2))
    from_file = np.asarray(kr.render(kr.load_file(str(xml_dir / f"{name}.xml")), spp=2))
    if description["integrator"]["type"] == "ptracer":  # splats add up atomically, in any order
        np.testing.assert_allclose(from_file, from_dict, rtol=1e-3, atol=1e-5 * from_dict.max())
    else:
        np.testing.assert_array_equal(from_file, from_dict)


def test_values_without_an_xml_form_are_errors():
    with pytest.raises(ValueError, match="no XML form"):
        scene_xml.to_xml({"type": "scene", "ball": {"type": "sphere", "center": [1, 2]}})
    with pytest.raises(ValueError, match="unknown plugin type 'teapot'"):
        scene_xml.to_xml({"type": "scene", "pot": {"type": "teapot"}})
