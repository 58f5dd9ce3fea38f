from __future__ import annotations

import os

# presidio's email recognizer must not try to download the public-suffix list.
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
