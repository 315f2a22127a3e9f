"""The cluster contract: the protocol the scheduler talks to, the kinds it knows, and the listers.

The embedded control plane (:mod:`kubesched.embedded`) and the live client (:mod:`kubesched.live`)
implement it; the scheduler sees nothing else of either.
"""
