// Process checks the tests share.

/** Whether a process with this pid exists (signal 0 tests without signalling). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
