"""A render inside a PyTorch graph (issue 18): kl.wrap_torch around kr.render makes the
image a torch tensor whose backward reaches a torch network that produced a texture, in
agreement with Kiln's own reverse mode. Skipped without PyTorch."""

import sys
from pathlib import Path

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr

torch = pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_render_grad import box_scene  # noqa: E402

KEY = "floor.bsdf.reflectance.data"


def test_a_texture_from_a_torch_network_is_optimized_through_the_renderer():
    scene = kr.load_dict(box_scene({"type": "prb", "max_depth": 3}, "symbolic"))
    params = kr.traverse(scene)
    texels = np.asarray(params[KEY]).size  # a (height, width, 3) tensor, written as one flat array

    def render(texture):  # Kiln values in and out
        params[KEY] = texture
        params.update()
        return kr.render(scene, params, spp=4, seed=0, seed_grad=1)

    render_torch = kl.wrap_torch(render)
    torch.manual_seed(0)
    network = torch.nn.Sequential(torch.nn.Linear(1, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1), torch.nn.Sigmoid())
    coordinates = torch.linspace(0, 1, texels).reshape(-1, 1)
    texture = network(coordinates).reshape(-1)
    image = render_torch(texture)
    assert isinstance(image, torch.Tensor) and image.shape == (8, 8, 3)
    weights = torch.rand(image.shape, generator=torch.Generator().manual_seed(1))
    (image * weights).sum().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in network.parameters())

    # The texture's gradient torch received equals Kiln's reverse mode on the same render.
    value = kl.Float(texture.detach().numpy())
    kl.enable_grad(value)
    kl.backward_from(render(value).array, kl.Float(weights.numpy().ravel()))
    texture_grad = torch.autograd.grad((render_torch(network(coordinates).reshape(-1)) * weights).sum(),
                                       network[0].weight)[0]
    expected = torch.autograd.grad(network(coordinates).reshape(-1), network[0].weight,
                                   grad_outputs=torch.from_numpy(np.asarray(kl.grad(value)).copy()))[0]
    torch.testing.assert_close(texture_grad, expected, rtol=1e-4, atol=1e-6)
    assert expected.abs().max() > 0
