/**
 * Shell completion: `compactor completion` prints a bash or zsh script, and the script's question
 * (`compactor --get-yargs-completions …`) is answered with commands, flags and flag values.
 */
import { execa } from 'execa';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runCli } from './helpers/cli.js';

const COMMANDS = ['estimate', 'inspect', 'compact', 'replay', 'context', 'fork', 'audit', 'report', 'completion'];

describe('compactor completion', () => {
  it('prints a bash script that asks compactor for its completions', async () => {
    const result = await runCli(['completion'], { env: { SHELL: '/bin/bash' } });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('compactor --get-yargs-completions');
    expect(result.stdout).toContain('complete -o bashdefault -o default -F _compactor_yargs_completions compactor');
  });

  it('prints a zsh script when the shell is zsh', async () => {
    const result = await runCli(['completion'], { env: { SHELL: '/usr/bin/zsh' } });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^#compdef compactor/);
    expect(result.stdout).toContain('compactor --get-yargs-completions');
  });

  it('answers with every command, then with a command\'s flags and a flag\'s choices', async () => {
    const commands = await runCli(['--get-yargs-completions', ''], { env: { SHELL: '/bin/bash' } });
    expect(commands.exitCode).toBe(0);
    expect(commands.stdout.trim().split('\n')).toEqual(COMMANDS);
    const flags = (await runCli(['--get-yargs-completions', 'compact', '--'], { env: { SHELL: '/bin/bash' } })).stdout.split('\n');
    expect(flags).toEqual(expect.arrayContaining(['--strategy', '--dry-run', '--keep-recent', '--json', '--log-format']));
    const strategies = await runCli(['--get-yargs-completions', 'compact', '--strategy', ''], { env: { SHELL: '/bin/bash' } });
    expect(strategies.stdout.trim().split('\n')).toEqual(['truncate', 'summarize', 'extract', 'prune']);
    const zsh = await runCli(['--get-yargs-completions', ''], { env: { SHELL: '/usr/bin/zsh' } });
    expect(zsh.stdout).toMatch(/^inspect:Audit token growth/m);
  });

  it('completes a command in a real bash with the printed script', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'compactor-completion-'));
    try {
      // `compactor` on PATH, as an installed package puts it.
      await writeFile(join(dir, 'compactor'), `#!/bin/sh\nexec node ${JSON.stringify(BIN)} "$@"\n`);
      await chmod(join(dir, 'compactor'), 0o755);
      const script = [
        'source <(compactor completion)',
        'COMP_WORDS=(compactor ins); COMP_CWORD=1; _compactor_yargs_completions; echo "${COMPREPLY[*]}"',
        'COMP_WORDS=(compactor inspect --gate-l); COMP_CWORD=2; _compactor_yargs_completions; echo "${COMPREPLY[*]}"',
      ].join('\n');
      const result = await execa('bash', ['-c', script], { env: { PATH: `${dir}:${process.env['PATH']}`, SHELL: '/bin/bash', CI: 'true' } });
      expect(String(result.stdout).split('\n')).toEqual(['inspect', '--gate-ledger']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
