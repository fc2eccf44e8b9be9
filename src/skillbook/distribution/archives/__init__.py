"""What a skill archive may hold and how it is unpacked: the rules the registry client,
the registry server, the publisher and the download installer share.

    names     the file names a skill may hold (one file system must be able to write
              every name as published; no two names that fold to one)
    paths     what an entry may be (relative, no ``..``, no drive letters, no links
              out), the size and count limits, ``stripComponents``
    extract   zip and tar.gz unpacked in-process into an empty staging folder under
              those rules; ``sha256_file``
    layout    which file makes a folder a skill, and which folder of an unpacked
              archive is the skill (``package/``, flat, or one top folder)
"""
