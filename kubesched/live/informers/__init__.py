"""The scheduler's informers: per-kind stores fed by list + watch against a live API server."""

from kubesched.live.informers.informer import Gone, Informer, ListWatch
from kubesched.live.informers.store import Delta, Store, key_of

__all__ = ["Delta", "Gone", "Informer", "ListWatch", "Store", "key_of"]
