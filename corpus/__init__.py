"""The review corpus of issue #27 §7 (manifest, build, run, review); see docs/corpus-review.md.

A package so that its modules are imported as ``corpus.build`` / ``corpus.run`` and never
shadow (or are shadowed by) a top-level ``build`` or ``run`` module elsewhere.
"""
