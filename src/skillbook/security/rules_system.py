"""Rules for a skill that harms the machine it runs on rather than stealing from it.

Input: a :class:`Document`. Output: :class:`Hit` values for ``destructive-command``
(wiping the home folder, the root or a disk; fork bombs; deleting backups),
``privilege-escalation`` (setuid shells, sudoers and passwd edits, containers with the
host's root, kernel modules, administrator prompts), ``command-hijack`` (a shell alias
or function standing in for ``sudo``, library preloading, git hooks redirected, Python
start-up files, hosts-file and root-certificate changes), ``defense-disable``
(firewalls, SELinux/AppArmor, audit, AMSI and endpoint agents switched off) and
``trace-wiping`` (shell history and system logs erased).

Each family is a table of patterns, each with the keywords one of which its line must
hold (the scanner's prefilter), so a file without them costs nothing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from skillbook.security import patterns
from skillbook.security.document import MARKDOWN, Document
from skillbook.security.findings import Severity
from skillbook.security.hit import Hit

_C, _H, _M = Severity.CRITICAL, Severity.HIGH, Severity.MEDIUM

#: (pattern, severity, message) of one family.
Table = tuple[tuple[re.Pattern[str], Severity, str], ...]

#: What a payload on the same line looks like: makes a high finding critical.
_PAYLOAD = patterns.compile(
    r"\b(?:curl|wget|iwr|irm|base64|nc|ncat)\b|/tmp/|/dev/shm/|https?://", re.I
)


#: Per pattern of a table, groups of keywords: a line must hold a word of every group
#: for the pattern to be tried there (specific words, or a verb and a noun together: a
#: common word alone would send most files through the pattern).
Cues = tuple[tuple[tuple[str, ...], ...], ...]


def _run(doc: Document, rule: str, table: Table, cues: Cues, *,
         markdown_only: tuple[re.Pattern[str], ...] = ()) -> Iterator[Hit]:  # fmt: skip
    """One hit per line: the first pattern of ``table`` (in order) that matches there."""
    if not doc.regions(_union(cues), after=0):
        return
    seen: set[int] = set()
    for (regex, severity, message), groups in zip(table, cues, strict=True):
        prose = regex in markdown_only
        if prose and doc.kind != MARKDOWN:
            continue
        spans = doc.regions(groups[0], after=0) if len(groups) == 1 else doc.regions_all(*groups)
        for m in doc.finditer_in(regex, spans):
            line = doc.line_of(m.start())
            if line in seen or (prose and doc.fence_at(line) is not None):
                continue  # prose patterns judge sentences, not the strings of code
            seen.add(line)
            yield Hit(rule, severity, m.start(), m.end(), message)


@functools.cache
def _union(cues: Cues) -> tuple[str, ...]:
    """The words of the first group of every pattern: a line holding none of them can
    match no pattern of the table."""
    return tuple(dict.fromkeys(w for groups in cues for w in groups[0]))


# --------------------------------------------------------------------------- destructive-command

#: The folders whose loss is the machine's or the user's: the root, the home folder and
#: the system folders, as a whole (``~/.cache/x`` is not one of them).
_WHOLE = (
    r"[\"']?(?:/|/\*|~|~/|~/\*|\$HOME|\$\{HOME\}|\$HOME/|\$HOME/\*|\"\$HOME\"|\"\$HOME\"/\*?"
    r"|/(?:home|Users|root|etc|usr|var|bin|boot|lib|opt|System|Applications)/?\*?"
    r"|~/(?:Documents|Desktop|Pictures|Downloads|Library|\.ssh|\.config)/?\*?"
    r"|\$HOME/(?:Documents|Desktop|Pictures|Downloads|Library)/?\*?)[\"']?(?=[\s;&|)`\"']|$)"
)
_DESTROY: Table = (
    (patterns.compile(rf"\brm\s+(?:-{{1,2}}\w[\w-]*\s+)+(?:--\s+)?{_WHOLE}", re.M), _C,
     "Deletes the root, the home folder or a system folder"),
    (patterns.compile(r"--no-preserve-root\b"), _C, "Deletes the root of the file system"),
    (patterns.compile(rf"\bfind\s+{_WHOLE}\s+(?:-(?:type|maxdepth|mindepth|xdev)\s+\S+\s+)*"
                      r"(?:-delete\b|-exec\s+(?:rm|shred)\b)", re.M), _C,
     "Deletes every file below the root or the home folder"),
    (patterns.compile(r"\bshutil\.rmtree\s*\(\s*(?:os\.path\.expanduser\s*\(\s*[\"']~/?[\"']\s*\)"
                      r"|(?:pathlib\.)?Path\.home\s*\(\s*\)|str\s*\(\s*Path\.home\s*\(\s*\)\s*\)"
                      r"|[\"'](?:/|~|C:\\\\?)[\"']|os\.environ\s*\[\s*[\"'](?:HOME|USERPROFILE)[\"']\s*\]"
                      r"|os\.getenv\s*\(\s*[\"'](?:HOME|USERPROFILE)[\"']\s*\)|os\.path\.expanduser\s*\(\s*[\"']~/(?:Documents|Desktop)[\"']\s*\))"
                      r"\s*[,)]"),
     _C, "Deletes the home folder or the root (shutil.rmtree)"),
    (patterns.compile(r"\b(?:rmSync|rmdirSync|rimraf(?:\.sync)?|rm|remove|removeSync|emptyDirSync)\s*\(\s*"
                      r"(?:os\.homedir\s*\(\s*\)|require\s*\(\s*[\"'](?:node:)?os[\"']\s*\)\.homedir\s*\(\s*\)"
                      r"|process\.env\.(?:HOME|USERPROFILE)\b|[\"'](?:/|~|C:\\\\)[\"'])\s*[,)]"), _C,
     "Deletes the home folder or the root (Node)"),
    (patterns.compile(r"\b(?:Remove-Item|ri|rm|del|rd|rmdir)\b(?=[^\n]{0,300}-Recurse)[^\n]{0,300}?\s[\"']?"
                      r"(?:[A-Z]:\\\*?|\$env:(?:USERPROFILE|HOMEPATH|SystemDrive|SystemRoot)\\?\*?"
                      r"|\$HOME\\?\*?|~\\?\*?)[\"']?(?=\s|$)", re.I | re.M), _C,
     "Deletes the home folder or a drive (PowerShell)"),
    (patterns.compile(r"\b(?:rd|rmdir)\s+/s\s+/q\s+[\"']?(?:[A-Z]:\\|%USERPROFILE%|%SystemDrive%|%SystemRoot%)"
                      r"|\bdel\s+(?:/[a-z]\s+)+[\"']?(?:[A-Z]:\\\*?|%USERPROFILE%)[\"']?(?:\s|$)"
                      r"|\bformat\s+[A-Z]:\s*(?:/[a-z]+\s*)*(?:$|[\s&|;`\"'])", re.I | re.M), _C,
     "Deletes or formats a drive (cmd)"),
    (patterns.compile(r"\bdd\b[^\n]{0,300}\bof=/dev/(?:sd[a-z]|nvme\d|disk\d|rdisk\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d)"
                      r"|\b(?:mkfs(?:\.\w+)?|wipefs|mke2fs|newfs\w*)\s+(?:-\S+\s+)*/dev/"
                      r"|\bshred\b[^\n]{0,300}\s/dev/(?:sd|nvme|disk|hd|vd|xvd|mmcblk)"
                      r"|>\s*/dev/(?:sd[a-z]|nvme\d|disk\d|rdisk\d|hd[a-z]|vd[a-z])\b"
                      r"|\bdiskutil\s+(?:eraseDisk|eraseVolume|zeroDisk|randomDisk|secureErase|partitionDisk)\b"
                      r"|\b(?:Clear-Disk|Format-Volume)\b", re.I), _C,
     "Overwrites or formats a disk"),
    (patterns.compile(r":\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"
                      r"|\b(?P<f>\w+)\s*\(\s*\)\s*\{\s*(?P=f)\s*\|\s*(?P=f)\s*&\s*\}"
                      r"|\bwhile\s*(?:\(\s*)?(?:True|1|true)\s*\)?\s*:?\s*\{?\s*(?:os\.fork|fork)\s*\(\s*\)"
                      r"|\bfork\s+while\s+fork\b|%0\|%0"), _C,
     "Fork bomb (exhausts the machine's processes)"),
    (patterns.compile(r"\bch(?:mod|own|grp)\s+(?:-\w+\s+)*-R\s+(?:-\w+\s+)*\S+\s+(?:/|/\*|~|\$HOME|/etc|/usr)"
                      r"(?=[\s;&|)`\"']|$)|\bchmod\s+(?:-\w+\s+)*(?:0?777|a\+rwx|ugo\+rwx)\s+/(?=[\s;&|)*`\"']|$)",
                      re.M), _C, "Changes the permissions or owner of the whole system"),
    (patterns.compile(r"\bvssadmin(?:\.exe)?\s+delete\s+shadows\b|\bwmic\s+shadowcopy\s+delete\b"
                      r"|\bwbadmin\s+delete\s+(?:catalog|systemstatebackup|backup)\b"
                      r"|\bbcdedit\b[^\n]{0,300}recoveryenabled\s+no\b|\btmutil\s+(?:delete|disable)\b"
                      r"|\bGet-WmiObject\s+Win32_Shadowcopy\b[^\n]{0,300}Delete", re.I), _C,
     "Deletes backups or system restore points (what ransomware does first)"),
    (patterns.compile(r"\b(?:openssl\s+(?:enc|aes-\d+-\w+)|gpg\s+(?:--\S+\s+)*(?:-c|--symmetric|-e|--encrypt)|age\s+(?:-\S+\s+)*-[pr])\b"
                      r"[^\n]{0,300}?(?:&&|;|\|\|)\s*(?:rm|shred|srm)\b"
                      r"|\.encrypt\s*\([^\n]{0,300}?\)\s*\)?[^\n]{0,120}?\bos\.(?:remove|unlink)\s*\(", re.I), _C,
     "Encrypts files and deletes the originals (ransomware)"),
    (patterns.compile(r"\bkill\s+-9\s+-1\b|\bkillall5\b|\bkill\s+-(?:9|KILL)\s+1\b"), _H,
     "Kills every process"),
)  # fmt: skip
#: Prose that tells the agent to destroy the user's data (Markdown only).
_DESTROY_PROSE = patterns.compile(
    r"\b(?:delete|remove|wipe|erase|destroy|purge|nuke|shred)\s+(?:all\s+(?:of\s+)?|everything\s+in\s+"
    r"|every\s+file\s+in\s+|the\s+(?:entire\s+)?contents\s+of\s+)?(?:the\s+user'?s\s+|your\s+|their\s+|the\s+)?"
    r"(?:entire\s+|whole\s+)?(?:home\s+(?:folder|directory|dir)|hard\s+(?:drive|disk)|(?:boot\s+|system\s+)?disk"
    r"|file\s*system|documents\s+folder|user\s+(?:files|data))\b(?!\s+(?:image|usage|space|cache|quota))",
    re.I,
)
_DESTROY_TABLE: Table = (
    *_DESTROY,
    (_DESTROY_PROSE, _H, "Tells the agent to delete the user's files or disk"),
)
_DESTROY_WORDS: Cues = (
    (('rm -', 'rm\t-'),),
    (('no-preserve-root',),),
    (('-delete', '-exec rm', '-exec shred'),),
    (('rmtree',),),
    (('homedir', 'env.home', 'env.userprofile'),),
    (('-recurse',),),
    (('/s /q', 'del /', 'format a:', 'format c:', 'format d:', 'format e:'),),
    (('of=/dev/', 'mkfs', 'wipefs', 'mke2fs', 'newfs', '/dev/sd', '/dev/nvme', '/dev/disk', '/dev/rdisk', '/dev/hd', '/dev/vd', 'diskutil', 'clear-disk', 'format-volume'),),
    ((':(){', ':|:', '&}', '& }', 'os.fork', 'fork while', '%0|%0'),),
    (('chmod -r', 'chown -r', 'chgrp -r', '777 /', 'a+rwx /', 'ugo+rwx /'),),
    (('vssadmin', 'shadowcopy', 'wbadmin', 'bcdedit', 'tmutil'),),
    (('openssl enc', 'openssl aes', 'gpg -c', 'gpg --symmetric', 'gpg -e', 'gpg --encrypt', 'gpg --batch', 'age -', '.encrypt('),),
    (('kill -9 -1', 'killall5', 'kill -kill 1', 'kill -9 1'),),
    (('home folder', 'home directory', 'home dir', 'hard drive', 'hard disk', 'disk', 'file system', 'filesystem', 'documents folder', 'user files', 'user data'), ('delete', 'remove', 'wipe', 'erase', 'destroy', 'purge', 'nuke', 'shred')),
)  # fmt: skip


def destructive_command(doc: Document) -> Iterator[Hit]:
    yield from _run(doc, "destructive-command", _DESTROY_TABLE, _DESTROY_WORDS,
                    markdown_only=(_DESTROY_PROSE,))  # fmt: skip


# --------------------------------------------------------------------------- privilege-escalation

_SHELLISH = r"(?:[\w./~$-]*/)?(?:\.[\w.-]+|(?:ba|z|da|k|c|tc|fi|r)?sh\w*|python[\w.]*|perl|ruby|node|env|find|vim?|cp|bash\w*)"
_PRIV: Table = (
    (patterns.compile(rf"\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwxt]*s[rwxt]*|0?[46][0-7]{{3}})\s+[\"']?"
                      rf"(?:{_SHELLISH}|/tmp/\S+|/dev/shm/\S+|/var/tmp/\S+)[\"']?(?=[\s;&|)]|$)", re.M), _C,
     "Makes a shell or interpreter setuid (root shell for anyone)"),
    (patterns.compile(r"\bchmod\s+(?:-\w+\s+)*(?:u\+s|\+s|0?[46][0-7]{3})\s+\S"
                      r"|\bos\.chmod\s*\([^\n]{0,300}(?:0o[46][0-7]{3}|S_ISUID)|\bos\.set(?:e|re)?uid\s*\(\s*0\s*\)"), _H,
     "Sets the setuid bit (runs as its owner, often root)"),
    (patterns.compile(r"(?:>>?|\btee\b(?:\s+-a)?|\bcp\b[^\n]{0,300}|\bmv\b[^\n]{0,300}|\bopen\s*\()\s*[\"']?/etc/sudoers(?:\.d/?\S*)?"
                      r"|\bsed\s+-i\S*\s[^\n]{0,300}/etc/sudoers\b"
                      r"|\b(?:echo|printf|print|write|cat)\b[^\n]{0,300}\bNOPASSWD\s*:\s*ALL\b"
                      r"|\bALL\s*=\s*\(\s*ALL(?:\s*:\s*ALL)?\s*\)\s*NOPASSWD\s*:\s*ALL\b(?=[^\n]{0,300}(?:>|tee|sudoers))",
                      re.I), _C, "Edits sudoers (root without a password)"),
    (patterns.compile(r"(?:>>|\btee\s+-a)\s*[\"']?/etc/(?:passwd|shadow|group)\b"
                      r"|\buseradd\b[^\n]{0,300}\s-o\b[^\n]{0,300}-u\s*0\b|\buseradd\b[^\n]{0,300}-u\s*0\s+-o\b"
                      r"|\busermod\b[^\n]{0,300}-u\s*0\b|:0:0:[^\n]{0,300}:/(?:bin|usr/bin)/(?:ba)?sh\b[^\n]{0,300}>>?\s*/etc/passwd",
                      re.I), _C, "Adds a root account"),
    (patterns.compile(r"\bchmod\s+(?:-\w+\s+)*(?:0?[0-7]?[67][0-7][67]|[ao]\+w\w*|ugo\+rwx)\s+/etc/(?:shadow|sudoers|passwd)\b"),
     _C, "Makes the password or sudoers file writable"),
    (patterns.compile(r"\b(?:docker|podman|nerdctl)\s+(?:container\s+)?(?:run|create)\b[^\n]{0,300}"
                      r"(?:\s(?:-v|--volume)[=\s]+[\"']?/:|--mount\s+[^\n]{0,300}\bsource=/,|\s--pid[=\s]host\b[^\n]{0,300}--privileged"
                      r"|--privileged\b[^\n]{0,300}\s--pid[=\s]host\b)", re.I), _C,
     "Runs a container with the host's root file system or processes (root on the host)"),
    (patterns.compile(r"\bnsenter\s+(?:-\w+\s+)*(?:-t|--target)[=\s]*1\b|\bchroot\s+/host\b", re.I), _C,
     "Enters the host's namespaces from a container (root on the host)"),
    (patterns.compile(r"\busermod\s+(?:-\w+\s+)*-a?G\s+(?:\S+,)?(?:sudo|wheel|admin|root|docker|adm)\b"
                      r"|\bgpasswd\s+-a\s+\S+\s+(?:sudo|wheel|admin|docker)\b"
                      r"|\bdscl\s+\.\s+-(?:append|merge)\s+/Groups/admin\b"
                      r"|\bdseditgroup\b[^\n]{0,300}-a\b[^\n]{0,300}\badmin\b"
                      r"|\bnet\s+localgroup\s+administrators\b[^\n]{0,300}/add\b"
                      r"|\bAdd-LocalGroupMember\b[^\n]{0,300}Administrators", re.I), _H,
     "Adds a user to an administrator group"),
    (patterns.compile(r"\bwith\s+administrator\s+privileges\b", re.I), _H,
     "Runs a command as root through an administrator password prompt (osascript)"),
    (patterns.compile(r"\b(?:insmod|kextload|kmutil\s+load)\b[^\n]{0,300}\S|\bmodprobe\s+(?:-f\s+)?\S+\.ko\b",
                      re.I), _H, "Loads a kernel module or extension"),
    (patterns.compile(r"\bsetcap\s+[\"']?cap_(?:setuid|setgid|sys_admin|dac_override|dac_read_search|sys_ptrace|sys_module)",
                      re.I), _H, "Grants a program root capabilities"),
    (patterns.compile(r"\bTCC\.db\b[^\n]{0,300}\b(?:insert|replace|update)\b|\b(?:insert|replace|update)\b[^\n]{0,300}\baccess\b[^\n]{0,300}TCC\.db",
                      re.I), _C, "Grants itself macOS privacy permissions (writes TCC.db)"),
    (patterns.compile(r"ms-settings\\+shell\\+open\\+command|\bfodhelper(?:\.exe)?\b|\bcomputerdefaults(?:\.exe)?\b"
                      r"|\b(?:EnableLUA|ConsentPromptBehaviorAdmin)\b[^\n]{0,300}(?:\b0\b|0x0)", re.I), _C,
     "Bypasses or turns off Windows UAC"),
)  # fmt: skip
_PRIV_PROSE = patterns.compile(
    r"\b(?:make|set)\s+(?:a\s+copy\s+of\s+)?(?:bash|the\s+shell|/bin/(?:ba)?sh)\s+(?:setuid|suid)\b"
    r"|\badd\s+(?:the\s+user\s+|yourself\s+|\w+\s+)?to\s+(?:the\s+)?sudoers\b"
    r"|\bpasswordless\s+sudo\b|\bsudo\s+without\s+(?:a\s+)?password\b",
    re.I,
)
_PRIV_TABLE: Table = (*_PRIV, (_PRIV_PROSE, _H, "Tells the agent to give itself root"))
_PRIV_WORDS: Cues = (
    (('chmod',),),
    (('chmod', 'os.chmod', 'setuid', 'seteuid', 'setreuid'),),
    (('sudoers', 'nopasswd'),),
    (('/etc/passwd', '/etc/shadow', '/etc/group', 'useradd', 'usermod', ':0:0:'),),
    (('/etc/shadow', '/etc/sudoers', '/etc/passwd'),),
    (('docker', 'podman', 'nerdctl'),),
    (('nsenter', 'chroot /host'),),
    (('usermod', 'gpasswd', 'dscl', 'dseditgroup', 'localgroup', 'add-localgroupmember'),),
    (('administrator privileges',),),
    (('insmod', 'kextload', 'kmutil', 'modprobe'),),
    (('setcap',),),
    (('tcc.db',),),
    (('ms-settings', 'fodhelper', 'computerdefaults', 'enablelua', 'consentpromptbehavioradmin'),),
    (('setuid', 'suid', 'sudoers', 'passwordless', 'without a password', 'without password'),),
)  # fmt: skip


def privilege_escalation(doc: Document) -> Iterator[Hit]:
    for h in _run(doc, "privilege-escalation", _PRIV_TABLE, _PRIV_WORDS,
                  markdown_only=(_PRIV_PROSE,)):  # fmt: skip
        if h.severity is _H and h.message.startswith("Runs a command as root"):
            line = doc.line_text(doc.line_of(h.start))
            if _PAYLOAD.search(line):
                h = Hit(h.rule, _C, h.start, h.end, h.message + " and runs a download as root")
        yield h


# --------------------------------------------------------------------------- command-hijack

_SENSITIVE = r"(?:sudo|su|doas|pkexec|passwd|ssh|scp|sftp|gpg|login|kinit|security|op|aws|git)"
_HIJACK: Table = (
    (patterns.compile(r"\balias\s+[\"']?(?:sudo|su|doas|pkexec|passwd)[\"']?\s*=", re.I), _C,
     "Replaces sudo/su with an alias (captures the password)"),
    (patterns.compile(r"(?:^|[;&{]\s*|\bfunction\s+)(?:sudo|su|doas|pkexec|passwd)\s*\(\s*\)\s*\{"
                      r"|\bfunction\s+(?:sudo|su|doas|pkexec|passwd)\b", re.I | re.M), _C,
     "Replaces sudo/su with a shell function (captures the password)"),
    (patterns.compile(rf"\balias\s+[\"']?{_SENSITIVE}[\"']?\s*=\s*[\"']?(?!{_SENSITIVE}\b)", re.I), _H,
     "Replaces a security-sensitive command with an alias"),
    (patterns.compile(r"(?:>>?|\btee\b(?:\s+-a)?|\b(?:cp|mv|install)\b[^\n]{0,300}|\bln\s+-s\w*\s+\S+)\s*[\"']?"
                      r"(?:~|\$HOME|/usr/local|/opt/homebrew|/tmp)(?:/[\w.-]+)*/bin/(?:sudo|su|doas|ssh|passwd|git|python3?|node)\b"
                      r"(?![\w.-])", re.I), _C, "Puts a fake sudo/ssh/git in a folder on the PATH"),
    (patterns.compile(r"/etc/ld\.so\.preload\b"), _C, "Preloads a library into every program (ld.so.preload)"),
    (patterns.compile(r"\b(?:LD_PRELOAD|DYLD_INSERT_LIBRARIES|LD_AUDIT)\b\s*[\"']?\]?\s*[=:]\s*(?!\s*[\"']?(?:/usr/|/lib|/opt/))"
                      r"|\blaunchctl\s+setenv\s+(?:DYLD_INSERT_LIBRARIES|LD_PRELOAD)\b", re.I), _H,
     "Injects a library into other programs (LD_PRELOAD / DYLD_INSERT_LIBRARIES)"),
    (patterns.compile(r"\bgit\s+config\s+(?:--(?!get|list|unset)\w+\s+)*(?:core\.(?:fsmonitor|sshCommand)\b"
                      r"|credential\.helper\s+[\"']?!)"
                      r"|\bgit\s+config\s+(?:--(?!get|list|unset)\w+\s+)*--(?:global|system)\s+(?:--(?!get|list|unset)\w+\s+)*core\.hooksPath\b"
                      r"|\bgit\s+config\s+(?:--(?!get|list|unset)\w+\s+)*core\.hooksPath\s+[\"']?(?:~|/|\$HOME)", re.I), _H,
     "Makes git run another program for every repository (global hooks path, fsmonitor, sshCommand)"),
    (patterns.compile(r"\bgit\s+config\s+(?:--(?!get|list|unset)\w+\s+)*(?:core\.hooksPath|url\.\S+\.insteadOf)\b"
                      r"|(?:>>?|\btee\b(?:\s+-a)?|\b(?:cp|mv|ln\s+-s\w*)\b[^\n]{0,300}|open\s*\(|write_text\s*\()\s*[\"']?"
                      r"[^\s\"']*\.git/hooks/(?:pre-|post-|prepare-|commit-msg|update|fsmonitor)", re.I), _M,
     "Sets git hooks or URL rewrites (runs on every commit, or fetches from elsewhere)"),
    (patterns.compile(r"(?:>>?|\btee\b(?:\s+-a)?|\b(?:cp|mv)\b[^\n]{0,300}|open\s*\(|write_text\s*\()\s*[^\n]{0,300}"
                      r"(?:site-packages|dist-packages|site\.getsitepackages|getusersitepackages)[^\n]{0,300}"
                      r"(?:\.pth\b|sitecustomize|usercustomize)"
                      r"|\b(?:sitecustomize|usercustomize)\.py\b[^\n]{0,300}(?:>|open\s*\(|write)"
                      r"|(?:sitepackages|site-packages|dist-packages|USER_SITE|purelib)[^\n]{0,300}\.pth\b", re.I), _H,
     "Writes a Python start-up hook (runs in every Python process)"),
    (patterns.compile(r"\b(?:export\s+)?(?:PYTHONSTARTUP|NODE_OPTIONS|PERL5OPT|RUBYOPT|BASH_ENV)=[\"']?"
                      r"(?=[^\n]{0,300}(?:--require|-r\s|/tmp/|/dev/shm/|\.\w+/\.|-M))", re.I), _H,
     "Makes every interpreter load a file first (NODE_OPTIONS, PYTHONSTARTUP, BASH_ENV)"),
    (patterns.compile(r"(?:>>|\btee\s+-a)\s*[\"']?(?:/private)?/etc/hosts\b"
                      r"|\bnetworksetup\s+-set(?:web|secureweb|socksfirewall)?proxy\b|\bnetworksetup\s+-setautoproxyurl\b"
                      r"|\bnetworksetup\s+-setdnsservers\b|\bnetsh\s+winhttp\s+set\s+proxy\b"
                      r"|\bnetsh\s+interface\s+ip\w*\s+set\s+dns", re.I), _H,
     "Redirects the machine's names, DNS or web proxy"),
    (patterns.compile(r"\bsecurity\s+add-trusted-cert\b|\bcertutil(?:\.exe)?\s+(?:-\w+\s+)*-addstore\s+[\"']?root"
                      r"|\bImport-Certificate\b[^\n]{0,300}Root\b|/usr/local/share/ca-certificates/|/etc/pki/ca-trust/source/anchors/"
                      r"|\btrust\s+anchor\s+", re.I), _H,
     "Installs a trusted root certificate (can read all HTTPS traffic)"),
)  # fmt: skip
_HIJACK_WORDS: Cues = (
    (('alias',),),
    (('sudo()', 'sudo ()', 'su()', 'su ()', 'doas()', 'pkexec()', 'passwd()', 'function sudo', 'function su', 'function doas', 'function pkexec', 'function passwd'),),
    (('alias',),),
    (('/bin/sudo', '/bin/su', '/bin/doas', '/bin/ssh', '/bin/passwd', '/bin/git', '/bin/python', '/bin/node'),),
    (('ld.so.preload',),),
    (('ld_preload', 'dyld_insert_libraries', 'ld_audit'),),
    (('git config',),),
    (('git config', '.git/hooks'),),
    (('site-packages', 'dist-packages', 'sitepackages', 'sitecustomize', 'usercustomize', 'user_site', 'purelib'),),
    (('pythonstartup', 'node_options', 'perl5opt', 'rubyopt', 'bash_env'),),
    (('/etc/hosts', 'networksetup', 'netsh'),),
    (('add-trusted-cert', 'certutil', 'import-certificate', 'ca-certificates', 'ca-trust', 'trust anchor'),),
)  # fmt: skip


def command_hijack(doc: Document) -> Iterator[Hit]:
    yield from _run(doc, "command-hijack", _HIJACK, _HIJACK_WORDS)


# --------------------------------------------------------------------------- defense-disable

_SECURITY_SERVICES = (
    r"(?:firewalld|ufw|iptables|nftables|apparmor|auditd|selinux\w*|falcon-sensor|falcond|crowdstrike\w*"
    r"|osqueryd|sentinel\w*|clamav\w*|clamd|wazuh\w*|ossec\w*|sysmon\w*|rsyslog|syslog|fail2ban|mdatp"
    r"|com\.crowdstrike\w*|xprotect\w*|WinDefend|Sense|wscsvc|SecurityHealthService|MsMpSvc|WdNisSvc)"
)
_DEFENSE: Table = (
    (patterns.compile(r"\bufw\s+(?:--force\s+)?disable\b|\biptables\s+(?:-t\s+\w+\s+)?-F\b|\bip6?tables\s+-P\s+INPUT\s+ACCEPT\b"
                      r"|\bnft\s+flush\s+ruleset\b|\bpfctl\s+-d\b|\bsocketfilterfw\b[^\n]{0,300}--setglobalstate\s+off\b"
                      r"|\bnetsh\s+(?:advfirewall\s+set\s+\w+\s+state\s+off|firewall\s+set\s+opmode\s+(?:mode=)?disable)"
                      r"|\bSet-NetFirewallProfile\b[^\n]{0,300}-Enabled\s+(?:False|\$false|0)\b", re.I), _C,
     "Turns the firewall off"),
    (patterns.compile(rf"\b(?:systemctl|service|launchctl|sc(?:\.exe)?|Stop-Service|Set-Service)\b[^\n]{{0,40}}?"
                      rf"(?:\b(?:stop|disable|mask|unload|bootout|delete|kill)\b[^\n]{{0,40}}?\b{_SECURITY_SERVICES}\b"
                      rf"|\b{_SECURITY_SERVICES}\b[^\n]{{0,40}}?(?:\b(?:stop|disable|mask|unload|bootout|delete)\b"
                      rf"|start=\s*disabled|-StartupType\s+Disabled))", re.I), _C,
     "Stops a security, audit or logging service"),
    (patterns.compile(r"\bSELINUX\s*=\s*(?:disabled|permissive)\b|\bsetenforce\s+(?:0|permissive)\b"
                      r"|\baa-(?:teardown|disable|complain)\b|\bauditctl\s+(?:-e\s*0|-D)\b"
                      r"|\bkernel\.randomize_va_space\s*=\s*0\b|/proc/sys/kernel/(?:randomize_va_space|yama/ptrace_scope)"
                      r"|\bsysctl\b[^\n]{0,300}\bptrace_scope\s*=\s*0", re.I), _C,
     "Turns SELinux, AppArmor, auditing or kernel hardening off"),
    (patterns.compile(r"\bamsiInitFailed\b|\bAmsiUtils\b|\bamsiContext\b|\bAmsiScanBuffer\b|\bEtwEventWrite\b", re.I), _C,
     "Disables AMSI/ETW (PowerShell's malware scanning)"),
    (patterns.compile(r"\bMpCmdRun(?:\.exe)?\b[^\n]{0,300}-RemoveDefinitions\b|\bDisable(?:AntiSpyware|RealtimeMonitoring|BehaviorMonitoring"
                      r"|IOAVProtection|ScriptScanning|AntiVirus)\b|\bUninstall-WindowsFeature\b[^\n]{0,300}Defender"
                      r"|\bTamperProtection\b[^\n]{0,300}\b0\b", re.I), _C,
     "Turns Microsoft Defender off"),
    (patterns.compile(r"\b(?:disable|turn\s+off|deactivate|stop|switch\s+off|shut\s+off)\s+(?:the\s+|your\s+|any\s+|all\s+)?"
                      r"(?:system\s+|host\s+|os\s+)?(?:firewall|selinux|apparmor|audit(?:ing|d)?\s*(?:logging)?|edr|endpoint\s+protection"
                      r"|security\s+(?:software|monitoring|agent|tools?)|amsi|crowdstrike|sentinelone|system\s+integrity\s+protection)\b",
                      re.I), _H, "Tells the reader to switch security tools off"),
)  # fmt: skip
_DEFENSE_WORDS: Cues = (
    (('ufw', 'iptables', 'ip6tables', 'nft flush', 'pfctl', 'socketfilterfw', 'advfirewall', 'netsh firewall', 'netfirewallprofile'),),
    (('firewalld', 'ufw', 'iptables', 'nftables', 'apparmor', 'auditd', 'selinux', 'falcon', 'crowdstrike', 'osqueryd', 'sentinel', 'clamav', 'clamd', 'wazuh', 'ossec', 'sysmon', 'syslog', 'fail2ban', 'mdatp', 'xprotect', 'windefend', 'wscsvc', 'securityhealthservice', 'msmpsvc', 'wdnissvc'),
     ('systemctl', 'service', 'launchctl', 'sc ', 'sc.exe', 'stop-service', 'set-service'),
     ('stop', 'disable', 'mask', 'unload', 'bootout', 'delete')),
    (('selinux', 'setenforce', 'aa-teardown', 'aa-disable', 'aa-complain', 'auditctl', 'randomize_va_space', 'ptrace_scope'),),
    (('amsi', 'etweventwrite'),),
    (('mpcmdrun', 'disableantispyware', 'disablerealtimemonitoring', 'disablebehaviormonitoring', 'disableioavprotection', 'disablescriptscanning', 'disableantivirus', 'uninstall-windowsfeature', 'tamperprotection'),),
    (('firewall', 'selinux', 'apparmor', 'auditd', 'auditing', 'audit log', 'edr ', 'edr.', 'edr,', 'endpoint protection', 'security software', 'security monitoring', 'security agent', 'security tool', 'amsi', 'crowdstrike', 'sentinelone', 'system integrity'), ('disable', 'turn off', 'deactivate', 'stop', 'switch off', 'shut off')),
)  # fmt: skip


def defense_disable(doc: Document) -> Iterator[Hit]:
    yield from _run(doc, "defense-disable", _DEFENSE, _DEFENSE_WORDS)


# --------------------------------------------------------------------------- trace-wiping

_HISTORY = r"[^\s\"']*\.(?:bash|zsh|sh|python|node_repl|mysql|psql|sqlite|lesshst|viminfo|r)_?history\b|[^\s\"']*\.zsh_history\b|[^\s\"']*\.viminfo\b"
_TRACES: Table = (
    (patterns.compile(r"\bhistory\s+-[cw]\b|\bunset\s+HISTFILE\b|\bHISTFILE\s*=\s*/dev/null\b"
                      r"|\b(?:export\s+)?HIST(?:FILE)?SIZE\s*=\s*0\b|\bset\s+\+o\s+history\b"
                      r"|\bClear-History\b|\bSet-PSReadLineOption\b[^\n]{0,300}-HistorySaveStyle\s+SaveNothing", re.I), _H,
     "Turns off or clears the shell history (hides what ran)"),
    (patterns.compile(rf"\b(?:rm|shred|truncate|srm|Remove-Item|del)\b[^\n]{{0,300}}?(?:{_HISTORY}|ConsoleHost_history)"
                      rf"|>\s*[\"']?(?:{_HISTORY})|\bln\s+-s\w*\s+/dev/null\s+[^\s]*_history\b", re.I), _H,
     "Deletes the shell history (hides what ran)"),
    (patterns.compile(r"\b(?:rm|shred|truncate|srm|find)\b[^\n]{0,300}?\s/var/log\b"
                      r"|>\s*/var/log/\S+|\btruncate\s+-s\s*0\s+/var/log"
                      r"|/var/log/(?:wtmp|btmp|lastlog|auth\.log|secure|syslog)\b[^\n]{0,300}(?:>|rm\b|shred|truncate)"
                      r"|\b(?:echo|cat\s+/dev/null|printf\s+['\"]{2})\s*>\s*/var/(?:log|run)/\S+"
                      r"|\bjournalctl\s+[^\n]{0,300}--vacuum-(?:time|size)=\s*(?:1s|0|1)\b|\bjournalctl\s+--rotate\b[^\n]{0,300}--vacuum"
                      r"|\bwevtutil(?:\.exe)?\s+(?:cl|clear-log)\b|\b(?:Clear|Remove)-EventLog\b|\blog\s+erase\b"
                      r"|\bfsutil\s+usn\s+deletejournal\b", re.I), _H,
     "Deletes system logs (hides what ran)"),
)  # fmt: skip
_TRACE_WORDS: Cues = (
    (('history -c', 'history -w', 'histfile', 'histsize', 'histfilesize', 'set +o history', 'clear-history', 'historysavestyle'),),
    (('_history', 'viminfo', 'consolehost'),),
    (('/var/log', '/var/run', 'journalctl', 'wevtutil', 'eventlog', 'log erase', 'deletejournal'),),
)  # fmt: skip


def trace_wiping(doc: Document) -> Iterator[Hit]:
    yield from _run(doc, "trace-wiping", _TRACES, _TRACE_WORDS)


# --------------------------------------------------------------------------- inline-exec

#: An interpreter one-liner that runs a shell command: the command sits inside a string
#: of another language, out of sight of a reader skimming for ``curl | sh``.
_INLINE = patterns.compile(
    r"\b(?:node|nodejs|deno|bun)\s+(?:-\w+\s+)*(?:-e|--eval|-p|--print)\s+[^\n]{0,300}?(?:child_process|execSync|spawnSync|Deno\.Command|Bun\.spawn)"
    r"|\bpython[0-9.]*\s+(?:-\w+\s+)*-c\s+[^\n]{0,300}?(?:os\.system|os\.popen|subprocess|pty\.spawn|os\.exec\w*)"
    r"|\b(?:perl|ruby)\s+(?:-\w+\s+)*-e\s+[^\n]{0,300}?(?:\bsystem\b|\bexec\b|`|%x|IO\.popen|Open3)"
    r"|\bphp\s+-r\s+[^\n]{0,300}?(?:\bsystem|shell_exec|passthru|exec|popen|proc_open)\s*\(",
    re.I,
)
_INLINE_WORDS = ("node -e", "node -p", "node --eval", "node --print", "nodejs -e", "bun -e", "bun --eval",
                 "-c \"", "-c '", "perl -e", "perl -ne", "ruby -e", "php -r")  # fmt: skip


def inline_exec(doc: Document) -> Iterator[Hit]:
    if not doc.regions(_INLINE_WORDS, after=0):
        return
    seen: set[int] = set()
    for m in doc.finditer(_INLINE, _INLINE_WORDS, after=0):
        line = doc.line_of(m.start())
        if line in seen:
            continue
        seen.add(line)
        payload = _PAYLOAD.search(doc.line_text(line))
        yield Hit("inline-exec", _C if payload else _M, m.start(), m.end(),
                  "An interpreter one-liner runs a shell command"
                  + (" that downloads or decodes a payload" if payload else ""))  # fmt: skip


#: Every keyword the rules of this module look for (for the keyword index).
KEYWORDS = (*_union(_DESTROY_WORDS), *_union(_PRIV_WORDS), *_union(_HIJACK_WORDS),
            *_union(_DEFENSE_WORDS), *_union(_TRACE_WORDS), *_INLINE_WORDS)  # fmt: skip
#: Per family, the keywords one of which a file must hold for it to find anything.
TRIGGERS = {
    "destructive_command": _union(_DESTROY_WORDS),
    "privilege_escalation": _union(_PRIV_WORDS),
    "command_hijack": _union(_HIJACK_WORDS),
    "defense_disable": _union(_DEFENSE_WORDS),
    "trace_wiping": _union(_TRACE_WORDS),
    "inline_exec": _INLINE_WORDS,
}
