/**
 * KMS for the rehearsal (AWS_ENDPOINT_URL_KMS): the template's customer
 * managed keys, each with key material of its own made at start, and
 * Encrypt/Decrypt as KMS answers them for a symmetric key:
 *
 * - the call is authorized as KMS authorizes it: the caller's IAM policies
 *   and the key's own policy (the template's KeyPolicy) together, the key
 *   policy first (an IAM policy counts only where the key policy lets the
 *   account's policies in), evaluated by iam.ts (iam-simulate models KMS's
 *   key-policy trust) with the request's kms:EncryptionContextKeys and
 *   kms:EncryptionContext:{key} (AWS KMS developer guide, "Key policies in
 *   AWS KMS" and "Encryption context");
 * - the encryption context is bound to the ciphertext (AES-256-GCM with the
 *   context as associated data): a ciphertext opens only with the context it
 *   was sealed with, and only under its own key (KeyId, when the Decrypt
 *   names one, must be the ciphertext's): InvalidCiphertextException or
 *   IncorrectKeyException otherwise, as KMS answers.
 *
 * KMS's JSON protocol (X-Amz-Target `TrentService.Encrypt`), blobs in base64.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { AwsCall, PolicyDocument } from './iam.js';

export interface KmsKey {
  readonly arn: string;
  readonly policy: PolicyDocument;
}

export interface KmsAnswer {
  status: number;
  type?: string;
  body: Record<string, unknown>;
}

/** What a call needs to be run: its evaluation (with the key's policy) and, once allowed, its answer. */
export interface KmsCall {
  readonly evaluation: AwsCall;
  readonly keyPolicy?: PolicyDocument;
  run(): KmsAnswer;
}

// `any`: KMS JSON request bodies, read by field name.
type Body = Record<string, any>;

const MAGIC = Buffer.from('RKMS1');

/** The context as KMS binds it: its pairs, sorted by key (so the same context in any order is the same AAD). */
const aad = (context: Record<string, string>): Buffer => Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => a.localeCompare(b))));

export class KmsStandIn {
  private readonly material = new Map<string, Buffer>();

  constructor(private readonly keys: readonly KmsKey[]) {
    for (const k of keys) this.material.set(k.arn, randomBytes(32));
  }

  /** The key a request's KeyId names (its ARN, its id, or the ARN's id part). */
  private keyOf(keyId: unknown): KmsKey | undefined {
    const id = String(keyId ?? '');
    return this.keys.find((k) => k.arn === id || k.arn.endsWith(`:key/${id}`));
  }

  private static contextKeys(context: Record<string, string>): Record<string, string | string[]> {
    return {
      'kms:EncryptionContextKeys': Object.keys(context),
      ...Object.fromEntries(Object.entries(context).map(([k, v]) => [`kms:EncryptionContext:${k}`, v])),
    };
  }

  /** The call for `operation`, or undefined when the rehearsal does not interpret it. */
  interpret(fn: string, operation: string, body: Body): KmsCall | undefined {
    const context = (body.EncryptionContext ?? {}) as Record<string, string>;
    if (operation === 'Encrypt') {
      const key = this.keyOf(body.KeyId);
      const resource = key?.arn ?? `arn:aws:kms:unknown:key/${String(body.KeyId)}`;
      return {
        evaluation: { fn, action: 'kms:Encrypt', resource, context: KmsStandIn.contextKeys(context) },
        keyPolicy: key?.policy,
        run: () => {
          if (!key) return { status: 400, type: 'NotFoundException', body: { message: `Key '${String(body.KeyId)}' does not exist` } };
          const iv = randomBytes(12);
          const cipher = createCipheriv('aes-256-gcm', this.material.get(key.arn)!, iv).setAAD(aad(context));
          const sealed = Buffer.concat([cipher.update(Buffer.from(String(body.Plaintext), 'base64')), cipher.final()]);
          const arn = Buffer.from(key.arn);
          const blob = Buffer.concat([MAGIC, Buffer.from([arn.length]), arn, iv, cipher.getAuthTag(), sealed]);
          return { status: 200, body: { CiphertextBlob: blob.toString('base64'), KeyId: key.arn, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' } };
        },
      };
    }
    if (operation === 'Decrypt') {
      const blob = Buffer.from(String(body.CiphertextBlob ?? ''), 'base64');
      const ok = blob.subarray(0, MAGIC.length).equals(MAGIC);
      const arnLength = ok ? blob[MAGIC.length]! : 0;
      const sealedUnder = ok ? blob.subarray(MAGIC.length + 1, MAGIC.length + 1 + arnLength).toString() : '';
      const key = this.keyOf(sealedUnder);
      const named = body.KeyId === undefined ? key : this.keyOf(body.KeyId);
      return {
        evaluation: { fn, action: 'kms:Decrypt', resource: key?.arn ?? 'arn:aws:kms:unknown:key/unknown', context: KmsStandIn.contextKeys(context) },
        keyPolicy: key?.policy,
        run: () => {
          if (!key) return { status: 400, type: 'InvalidCiphertextException', body: { message: 'The ciphertext is invalid' } };
          if (named !== key) return { status: 400, type: 'IncorrectKeyException', body: { message: 'The key ID in the request does not identify the key that encrypted the ciphertext' } };
          const rest = blob.subarray(MAGIC.length + 1 + arnLength);
          try {
            const decipher = createDecipheriv('aes-256-gcm', this.material.get(key.arn)!, rest.subarray(0, 12)).setAAD(aad(context));
            decipher.setAuthTag(rest.subarray(12, 28));
            const plain = Buffer.concat([decipher.update(rest.subarray(28)), decipher.final()]);
            return { status: 200, body: { Plaintext: plain.toString('base64'), KeyId: key.arn, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' } };
          } catch {
            // Another encryption context (or a changed ciphertext): KMS says only that the ciphertext is invalid.
            return { status: 400, type: 'InvalidCiphertextException', body: { message: 'The ciphertext is invalid' } };
          }
        },
      };
    }
    return undefined;
  }
}
