"""Data lifecycle and least privilege (issue 16): roles, verification of the hash chain,
erasure by crypto-shredding, retention. The chain itself lives in ``store.chain``."""
