/**
 * Where a webhook's secret is kept (PRODUCT P18: only the delivery function
 * and the key manager can read it). The webhook item holds it sealed, never
 * in clear: in AWS by KMS (Encrypt/Decrypt under the stack's webhook-secrets
 * key, whose key policy lets only those two roles use it; lib/webhooks.ts),
 * with the webhook's id as encryption context, so a sealed secret copied to
 * another webhook's item does not open. Reading the table (a role with
 * GetItem on the webhook partitions, a backup, an export) gives a
 * ciphertext only. Locally an AES-256-GCM key of the process's own.
 *
 * A secret is 44 bytes: KMS encrypts it directly (up to 4 KB), so no data
 * key (envelope) is needed; the delivery function keeps each opened secret
 * in memory for the container's life, by its ciphertext, so a delivery costs
 * no KMS call once a container has sent one for the webhook.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';

export interface SecretBox {
  seal(secret: string, webhookId: string): Promise<string>;
  open(sealed: string, webhookId: string): Promise<string>;
}

const context = (webhookId: string) => ({ webhook_id: webhookId });

/** KMS: the key's id or ARN; the client's endpoint follows the SDK's settings (the rehearsal points it at its stand-in). */
export function kmsSecretBox(keyId: string, client: KMSClient = new KMSClient({})): SecretBox {
  const opened = new Map<string, string>();
  return {
    async seal(secret, webhookId) {
      const out = await client.send(new EncryptCommand({ KeyId: keyId, Plaintext: new TextEncoder().encode(secret), EncryptionContext: context(webhookId) }));
      if (!out.CiphertextBlob) throw new Error('KMS answered no ciphertext');
      return `kms:${Buffer.from(out.CiphertextBlob).toString('base64')}`;
    },
    async open(sealed, webhookId) {
      const known = opened.get(sealed);
      if (known !== undefined) return known;
      if (!sealed.startsWith('kms:')) throw new Error('not a KMS-sealed secret');
      const out = await client.send(new DecryptCommand({ KeyId: keyId, CiphertextBlob: Buffer.from(sealed.slice(4), 'base64'), EncryptionContext: context(webhookId) }));
      if (!out.Plaintext) throw new Error('KMS answered no plaintext');
      const secret = new TextDecoder().decode(out.Plaintext);
      opened.set(sealed, secret);
      return secret;
    },
  };
}

/** AES-256-GCM under `key` (the local server's: new at each start, like its store), the webhook id as associated data. */
export function localSecretBox(key: Uint8Array = randomBytes(32)): SecretBox {
  return {
    async seal(secret, webhookId) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(webhookId));
      const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return `gcm:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
    },
    async open(sealed, webhookId) {
      if (!sealed.startsWith('gcm:')) throw new Error('not a locally sealed secret');
      const raw = Buffer.from(sealed.slice(4), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12)).setAAD(Buffer.from(webhookId));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}
