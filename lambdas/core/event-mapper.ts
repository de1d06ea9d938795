/**
 * Stored items → response objects (spec §2.2, §2.4; PRODUCT P9, P10). The
 * mappers name every field they emit, so nothing stored ever leaks by accident.
 */
import type * as z from 'zod';
import type { EventPayload, RsvpItem } from './read-items.js';
import type { guestSchema, publicEventSchema } from './response-schemas.js';

/** Derived from the response schemas, so a mapper and the documents cannot drift. */
export type PublicEvent = z.infer<typeof publicEventSchema>;
export type Guest = z.infer<typeof guestSchema>;

/** Where the site serves the images used when an event or user has none (the local server serves them too). */
export const DEFAULT_IMAGE_PATHS = { cover: '/images/default-cover.png', avatar: '/images/default-avatar.png' } as const;

/** Defence in depth: the indexes already hold only public events. */
export function isPublicPayload(p: Pick<EventPayload, 'status' | 'visibility'>): boolean {
  return p.status === 'published' && p.visibility === 'public';
}

export function toPublicEvent(p: EventPayload, siteUrl: string): PublicEvent {
  return {
    id: p.event_id,
    title: p.title,
    description: p.description ?? '',
    cover: p.cover ?? `${siteUrl}${DEFAULT_IMAGE_PATHS.cover}`,
    location: p.location?.name ?? '',
    start_date: p.start_date,
    end_date: p.end_date,
    timezone: p.timezone,
    status: 'published',
    visibility: 'public',
    cost: p.cost,
    created_at: p.created_at,
    creator: {
      id: p.creator.id,
      username: p.creator.username,
      image: p.creator.image ?? `${siteUrl}${DEFAULT_IMAGE_PATHS.avatar}`,
      verification_status: p.creator.verification_status,
    },
    links: { spotify_url: p.links.spotify_url, wavlake_url: p.links.wavlake_url },
    contributions: {
      cashapp: p.contributions.cashapp,
      venmo: p.contributions.venmo,
      paypal: p.contributions.paypal,
      btc_lightning: p.contributions.btc_lightning,
    },
  };
}

export function toGuest(item: RsvpItem): Guest {
  return {
    id: item.guest.id,
    username: item.guest.username,
    name: item.guest.name,
    image: item.guest.image,
    verification_status: item.guest.verification_status,
    rsvp_status: item.rsvp_status,
    rsvp_date: item.rsvp_date,
  };
}
