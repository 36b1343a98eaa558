// The Node.js release line the project runs on. package.json's `engines` and its `node` dev
// dependency (which puts a Node 24 binary first on every npm script's PATH, whatever the
// machine's own `node` is) say the same; this is the check every entry point makes.
export const REQUIRED_NODE_MAJOR = 24;

export interface RuntimeCheck {
  ok: boolean;
  version: string;
  message: string;
}

export function checkRuntime(version: string = process.versions.node): RuntimeCheck {
  const major = Number(version.split('.')[0]);
  const ok = major === REQUIRED_NODE_MAJOR;
  return {
    ok,
    version,
    message: ok
      ? `node v${version}`
      : `node v${version} is not the supported Node ${REQUIRED_NODE_MAJOR} LTS: run through npm (npm start, npm test, npm run gateway) so that node_modules/.bin/node is used, or install Node ${REQUIRED_NODE_MAJOR}`,
  };
}
