"""Install what a skill needs: OpenClaw's installers (spec §8) with skillbook's guards.

The pipeline, one module each::

    select      which installer (§8.2 preference chain, ids as ``info`` shows them)
    policy      skills.install.policy and the apt/pip opt-ins may refuse it
    (scan)      the security scan runs first; critical findings block (§8.3 step 4;
                :mod:`skillbook.distribution.scan_gate`, shared with the registry)
    argv        the installer's argv and its second validation pass (§8.3 step 8)
    bootstrap   brew lookup, uv/go bootstraps, apt via root or ``sudo -n`` (§8.3 9-12)
    fallback    opt-in apt/pip on Linux when brew or uv is missing
    download    §8.5: tools dir (tools_dir), guarded fetch (``distribution.http``,
                ``distribution.netguard``), sha256, zip/tar.gz in-process
                (``distribution.archives``), tar.bz2 through a ``tar`` preflight
                (tarbz2), atomic swap (``distribution.swap.StagedTarget``)
    execute     runs the command steps (runner) and sums up failures (result)
    setup, run  plan_setup → consent (the caller's) → run_setup → fresh status

Typical use::

    from skillbook import load
    from skillbook.distribution.install.run import run_setup
    from skillbook.distribution.install.setup import plan_setup

    plan = plan_setup(load("~/ws"), "weather")
    print(plan.to_json())          # what would run
    outcome = run_setup(plan)      # calling it is the consent
    print(outcome.result.message, outcome.after.status if outcome.after else "")

Part of :mod:`skillbook.distribution`: above the pipeline, security and the runtime.
"""
