"""What every part stands on; imports nothing else of skillbook.

JavaScript's value rules, so results match OpenClaw's: ``js`` (UTF-16 lengths and
slices, code-unit sort, ``localeCompare``, ``JSON.stringify``, JSON5).
Small building blocks: ``fast_init`` (slot-storing ``__init__`` for frozen values),
``once`` (a value computed on first use), ``known_path`` (cheap ``Path`` objects),
``shell_words`` (a shell command as words, for the ``exec`` allowlists),
``surrogates`` (lone surrogates replaced before text is printed or tokenized),
``closest`` (the names a person probably meant by one that matched none).
The file system read and written safely: ``fs`` (containment, real paths, opens without
following links), ``verified_read`` (bounded, verified reads of skill files),
``pinned_root`` (a root held open while its skills are read), ``listing`` (directory
listings in Node's order), ``atomic`` (temporary file + rename, folder exchange),
``locks`` (``flock`` across a read-modify-write).
"""
