#!/bin/sh
# Usage: prune-merged.sh [--base REF] [--delete] [--gone] [--no-fetch]
# Lists local branches that are merged into REF (default: origin's HEAD, else
# main or master) and, with --gone, branches whose upstream was deleted.
# Nothing is deleted without --delete. Protected: the current branch, REF,
# main, master, develop, trunk and release/*.
set -eu

base=""
delete=0
gone=0
fetch=1
while [ $# -gt 0 ]; do
    case $1 in
        --base) base=${2:?--base needs a ref}; shift 2 ;;
        --delete) delete=1; shift ;;
        --gone) gone=1; shift ;;
        --no-fetch) fetch=0; shift ;;
        -h | --help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "prune-merged.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

git rev-parse --git-dir >/dev/null

if [ "$fetch" -eq 1 ] && git remote | grep -qx origin; then
    git fetch --prune --quiet origin || echo "warning: fetch failed, using local refs" >&2
fi

if [ -z "$base" ]; then
    base=$(git symbolic-ref --quiet --short refs/remotes/origin/HEAD 2>/dev/null || true)
fi
if [ -z "$base" ]; then
    for candidate in main master; do
        if git show-ref --verify --quiet "refs/heads/$candidate"; then
            base=$candidate
            break
        fi
    done
fi
if [ -z "$base" ]; then
    echo "prune-merged.sh: cannot tell the default branch; pass --base REF" >&2
    exit 2
fi
git rev-parse --verify --quiet "$base^{commit}" >/dev/null || {
    echo "prune-merged.sh: $base is not a commit" >&2
    exit 2
}

current=$(git symbolic-ref --quiet --short HEAD 2>/dev/null || true)
base_short=${base#origin/}

protected() {
    case $1 in
        "$current" | "$base" | "$base_short" | main | master | develop | trunk | release/*) return 0 ;;
    esac
    return 1
}

merged=$(git for-each-ref --format='%(refname:short)' --merged "$base" refs/heads/)
orphaned=$(git for-each-ref --format='%(refname:short) %(upstream:track)' refs/heads/ \
    | awk '$2 == "[gone]" { print $1 }')

echo "base: $base"
count=0
for branch in $merged; do
    protected "$branch" && continue
    count=$((count + 1))
    if [ "$delete" -eq 1 ]; then
        # -d re-checks against HEAD/upstream; a refusal is reported, not fatal.
        git branch -d "$branch" || echo "kept $branch (git refused -d; check it by hand)" >&2
    else
        echo "would delete (merged):        $branch"
    fi
done
for branch in $orphaned; do
    protected "$branch" && continue
    # Already handled above when it is also merged.
    printf '%s\n' "$merged" | grep -qx -- "$branch" && continue
    count=$((count + 1))
    if [ "$gone" -eq 1 ] && [ "$delete" -eq 1 ]; then
        git branch -D "$branch"
    else
        echo "would delete (upstream gone): $branch  (needs --delete --gone)"
    fi
done
if [ "$count" -eq 0 ]; then
    echo "nothing to prune"
elif [ "$delete" -eq 0 ]; then
    echo "dry run: re-run with --delete (and --gone for upstream-gone branches)"
fi
