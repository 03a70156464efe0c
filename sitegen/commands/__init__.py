"""One module per command (`sitegen check` is commands/check.py, …): each reads its inputs, writes its outputs,
prints through commands/console.py and returns its exit code; the command line (cli/) only parses options."""
