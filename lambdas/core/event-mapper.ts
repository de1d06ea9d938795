/**
 * Stored items → response objects (spec §2.2, §2.4; PRODUCT P9, P10). The
 * mappers name every field they emit, so nothing stored ever leaks by accident.
 */
import type { EventPayload, RsvpItem } from '../store/items.js';

export interface PublicEvent {
  id: string;
  title: string;
  description: string;
  cover: string;
  location: string;
  start_date: string;
  end_date: string | null;
  timezone: string;
  status: 'published';
  visibility: 'public';
  cost: number | null;
  created_at: string;
  creator: { id: string; username: string; image: string; verification_status: string | null };
  links: { spotify_url: string | null; wavlake_url: string | null };
  contributions: { cashapp: string | null; venmo: string | null; paypal: string | null; btc_lightning: string | null };
}

export interface Guest {
  id: string;
  username: string;
  name: string | null;
  image: string | null;
  verification_status: string | null;
  rsvp_status: string;
  rsvp_date: string;
}

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
