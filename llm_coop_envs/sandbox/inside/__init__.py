"""What runs inside the warm interpreter (see README.md here). The warm interpreter runs
`_zygote.py` as a script, so these modules import each other as top-level modules and use only
the standard library; the caller imports the few it shares (`_codec`, `_compiled`, `_protocol`,
`_reap`, `_trash`) from this package."""
