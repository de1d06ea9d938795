// setupFilesAfterEnv of jest's "browser" project: a browser's launch and page loads take longer than the other
// projects' 30 s allows on a loaded machine. jest 29 reads `testTimeout` only from the run's own config, not a
// project's, so the project sets it here (the load-aware environment stretches it like any other).
import { jest } from '@jest/globals';

jest.setTimeout(90_000);
