// globalSetup of jest's "browser" project: the project runs only where Chromium is or where it is required
// (browser.js); where it is required and missing, the run fails here at once, saying how to install it,
// rather than once per test file with playwright's launch error.
import { chromiumMissing, hasChromium } from './browser.js';

export default function globalSetup() {
  if (!hasChromium()) throw new Error(chromiumMissing());
}
