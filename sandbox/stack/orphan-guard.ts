// Preloaded (`node --import`) into every child of the stack. Ctrl-C and SIGTERM reach the stack,
// which stops its children itself; but if the stack dies without doing so (SIGKILL, a crash), a
// child would live on holding its port. This guard notices that its parent is gone and sends the
// child SIGTERM, so the service runs its own clean shutdown (and is killed if that takes > 10 s).
const parent = Number(process.env.STACK_PARENT_PID);
if (Number.isInteger(parent) && parent > 0) {
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    setTimeout(() => process.exit(1), 10_000).unref();
    process.kill(process.pid, 'SIGTERM');
  }, 500);
  timer.unref(); // never keeps a finished service alive
}
export {};
