/**
 * Is a process still running on this host? Used to tell a live lock holder from one a SIGKILL
 * left behind.
 */

/** EPERM means the process exists but belongs to another user. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
