/**
 * Without Java 17 the DynamoDB Local project fails, saying how to install
 * Java or run the dynalite tests alone; it never skips quietly.
 */
import { describe, expect, it } from '@jest/globals';
import { JAVA_MISSING, assertJava } from '../support/dynamodb-local.js';

describe('DynamoDB Local needs Java', () => {
  it('a machine without java gets the command that installs it', () => {
    expect(() => assertJava('/nonexistent/java')).toThrow(JAVA_MISSING);
    expect(JAVA_MISSING).toContain('apt-get install -y openjdk-17-jre-headless');
    expect(JAVA_MISSING).toContain('--selectProjects dynalite');
  });

  it('a java that is not 17 or newer is refused the same way', () => {
    // `node -version` fails and prints no version: as good as no Java.
    expect(() => assertJava(process.execPath)).toThrow(JAVA_MISSING);
  });
});
