/**
 * The default cover and avatar that events and users without an image point
 * at (`{siteUrl}/images/default-*.png`), for the local server, where siteUrl
 * points by default. Drawn in code and encoded as PNG at start-up, so the
 * repository holds no binary and the pictures are easy to change.
 */
import type { ServerResponse } from 'node:http';
import { crc32, deflateSync } from 'node:zlib';
import { DEFAULT_IMAGE_PATHS } from '../lambdas/core/event-mapper.js';

type Rgb = readonly [number, number, number];

export interface Png {
  width: number;
  height: number;
  body: Buffer;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** An 8-bit RGB PNG (colour type 2, no interlace) of `pixel(x, y)`. */
export function encodePng(width: number, height: number, pixel: (x: number, y: number) => Rgb): Png {
  const rowBytes = 1 + width * 3;
  const raw = Buffer.alloc(rowBytes * height);
  for (let y = 0; y < height; y++) {
    raw[y * rowBytes] = 0; // filter: none
    for (let x = 0; x < width; x++) {
      const [r, g, b] = pixel(x, y);
      raw.set([r, g, b], y * rowBytes + 1 + x * 3);
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // bit depth, colour type, compression, filter, interlace
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const body = Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
  return { width, height, body };
}

const mix = (a: Rgb, b: Rgb, t: number): Rgb => [0, 1, 2].map((i) => Math.round(a[i]! + (b[i]! - a[i]!) * t)) as unknown as Rgb;

/** 1200×630 (the usual social-card size): a diagonal indigo-to-sky gradient. */
function cover(): Png {
  const [w, h] = [1200, 630];
  return encodePng(w, h, (x, y) => mix([79, 70, 229], [14, 165, 233], (x / w + y / h) / 2));
}

/** 256×256: a grey head-and-shoulders silhouette on a light ground. */
function avatar(): Png {
  const size = 256;
  const inside = (x: number, y: number, cx: number, cy: number, rx: number, ry: number) => ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 <= 1;
  return encodePng(size, size, (x, y) => (inside(x, y, 128, 100, 48, 48) || inside(x, y, 128, 256, 96, 84) ? [156, 163, 175] : [229, 231, 235]));
}

/** Path → image, drawn once per process. */
export const DEFAULT_IMAGES: ReadonlyMap<string, Png> = new Map([
  [DEFAULT_IMAGE_PATHS.cover, cover()],
  [DEFAULT_IMAGE_PATHS.avatar, avatar()],
]);

/** Served like the widget assets: cacheable, and readable from any origin (host pages show them). */
export function serveImage(res: ServerResponse, image: Png): void {
  res.writeHead(200, {
    'content-type': 'image/png',
    'content-length': image.body.length,
    'cache-control': 'public, max-age=86400',
    'access-control-allow-origin': '*',
    'x-content-type-options': 'nosniff',
  });
  res.end(image.body);
}
