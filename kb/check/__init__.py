"""`kb check -- CMD`: run a user's own training program and say, before and after, whether the
knowledge base's recipe makes it repeat bit for bit.

Why a separate tool from `kb scan` and `kb probe`: the scan reads source and cannot see a
tensor's rank, dtype or layout, nor which attention or convolution kernel runs; the probe
needs probes in the script. `kb check` needs neither: a start-up hook (a `sitecustomize` on
PYTHONPATH, the user's code unchanged) records the calls the program really makes, the
knowledge base answers for each with those facts, the outcome under the recipe is predicted,
and then the program runs twice as written and twice with the recipe applied (environment
variables and switches set by the hook), every run a fresh process, and the parameters and
losses are compared bit for bit (the probe's fingerprints). docs/check.md is the user guide.

Modules, lowest first:
- boot.py: the start-up hook's text, the environment of each run, which recipe codes the hook
  or the environment can apply;
- inside.py: what runs inside the user's process: import hooks, steps, losses, parameters,
  the stop after N steps (never raises into the program);
- inventory_torch.py, inventory_jax.py: the calls of the first steps, with their facts;
- switches.py: a recipe's codes applied inside the process;
- predict.py: the knowledge base's answer for each call, the recipe, the predicted outcome;
- outcome.py: what the runs did (compared with the probe's diff), and the verdict;
- report.py: text and JSON;
- runner.py: the processes; cli.py: `kb check`.
"""
