"""kiln.render: a physically based renderer on Kiln that reads Mitsuba 3 scenes.

    import kiln.render as kr
    scene = kr.load_file("scene.xml")          # or kr.load_dict({...}) in Mitsuba's format
    image = kr.render(scene, spp=64)           # kl.TensorXf (height, width, channels)
    kr.write_image(image, "out.exr")
    params = kr.traverse(scene)                # Mitsuba's keys: 'sensor.film.size', ...
    params['sensor.film.size'] = (128, 96); params.update()

The classes and functions are C++ (kiln._kiln_render); this module only imports them.
"""

try:
    from kiln._kiln_render import *  # noqa: F401,F403
except ImportError as error:
    raise ImportError(
        "kiln.render is not available: Kiln was built without it (the renderer needs OpenEXR, "
        "libpng, Embree 3, pugixml and tinyobjloader at build time; scripts/bootstrap.sh installs them). "
        f"Import error: {error}"
    ) from error
