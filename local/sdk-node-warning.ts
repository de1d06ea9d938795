/**
 * Imported first by every command a newcomer runs (`npm start`, `npm run
 * data:load`, `npm run data:apply`, `npm run keys`, and `npm run bench`), so
 * that their output holds nothing to act on but their own.
 *
 * On Node < 22 the AWS SDK v3 (`emitWarningIfUnsupportedVersion` in
 * @aws-sdk/core) prints a multi-line NodeVersionSupportWarning the first time
 * it builds a client: SDK versions published after early January 2027 will
 * need Node 22. This checkout pins its SDK versions in package-lock.json, so
 * nothing changes for it on Node 20; the one thing to act on, Node 22 being
 * the recommended runtime, is stated where a reader looks for it (`.nvmrc`,
 * `engines`, the README), and moving the pins past January 2027 is a
 * maintainer's upgrade (docs/design.md, "Runtime").
 *
 * This sets exactly the switch the SDK reads for that one warning, and only
 * when the environment has not chosen: every other warning and deprecation
 * still prints, and `AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=false`
 * brings this one back. Lambda runs Node 24, where the SDK never warns, so
 * the handlers do not import this.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export {};
