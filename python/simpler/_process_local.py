"""``ProcessLocal``: objects that name resources of this process (a driver stream or event
handle, device memory, a runtime context) cannot be pickled or copied. A copy would share
the resource and release it when collected (a copied Stream destroyed the original's
stream), and a handle means nothing in another process. Refused with SimplerTypeError."""
from __future__ import annotations

from typing import Any, NoReturn

from simpler.errors import SimplerTypeError


class ProcessLocal:
    __slots__ = ()

    def __reduce_ex__(self, protocol: Any) -> NoReturn:  # pickle, copy.copy, copy.deepcopy
        name = f"{type(self).__module__}.{type(self).__qualname__}"
        raise SimplerTypeError(f"{name} cannot be pickled or copied: it names a resource of "
                               "this process (a driver handle, device memory or a runtime "
                               "context); create a new one where you need it")
