"""Mitsuba's mi.Texture1f / 2f / 3f: Kiln's textures whose tensor() is the texture's own
tensor object, as Dr.Jit's is, so that a plugin's traverse() can list it
(cb.put('grid', self.grid.tensor(), ...)): kr.traverse changes that tensor in place, and
update_inplace() -- what the plugin's parameters_changed() calls -- makes the texture read
it (also at a new resolution)."""

import kiln as _kl


def _mitsuba_texture(base):
    class Texture(base):
        __doc__ = f"{base.__name__} with Mitsuba's tensor() / update_inplace()."

        def __init__(self, *args, use_accel=True, migrate=True, **kwargs):
            base.__init__(self, *args, **kwargs)  # use_accel, migrate: GPU texture units, which Kiln does not use
            self._tensor = base.tensor(self)

        def tensor(self):
            """The texels: the same tensor object on every call (changing it changes the
            texture after update_inplace())."""
            return self._tensor

        def set_tensor(self, tensor, migrate=False):
            base.set_tensor(self, tensor)
            self._tensor = base.tensor(self)

        def update_inplace(self, migrate=True):
            """Reads tensor() again, after it was changed in place (its shape may differ)."""
            base.set_tensor(self, self._tensor)

    Texture.__name__ = Texture.__qualname__ = base.__name__
    return Texture


Texture1f, Texture2f, Texture3f = (_mitsuba_texture(t) for t in (_kl.Texture1f, _kl.Texture2f, _kl.Texture3f))
