// The extensionTestsPath entry: VS Code calls run() in the extension host and exits with its outcome.
export { run } from './suite.js';
