/**
 * The example bodies the docs show, taken from the generated examples (real
 * answers over the demo data). test/unit/readme.test.ts holds each page to
 * them, so no page can show a body the API no longer gives.
 */
import { EXAMPLES } from '../lambdas/openapi/examples.generated.js';

export interface ReadmeExample {
  title: string;
  /** The page that shows it, relative to the repository root. */
  page: string;
  text: string;
  json: string;
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

export function readmeExamples(): ReadmeExample[] {
  return [
    {
      title: 'Public Event',
      page: 'docs/endpoints.md',
      text: '`data` of `GET /api/public/v1/events/evt_jazz01` (and each item of the Public lists):',
      json: pretty(EXAMPLES.getEvent.data),
    },
    {
      title: 'Embed Event',
      page: 'docs/embed.md',
      text: '`data` of `GET /api/embed/v1/events/evt_jazz01`; `status` is computed at read time:',
      json: pretty(EXAMPLES.embedGetEvent.data),
    },
    {
      title: 'Guests, and pagination',
      page: 'docs/endpoints.md',
      text: 'the whole answer of `GET /api/public/v1/events/evt_jazz01/guests?status=all&limit=2`; paginated lists carry `pagination` beside `data`, and clients stop when `offset + limit >= total`:',
      json: pretty(EXAMPLES.getEventGuests),
    },
    {
      title: 'Errors',
      page: 'docs/errors-and-rate-limits.md',
      text: 'every error is `{success: false, message}`; a bad parameter adds `errors`, one per failing parameter (`?status=going&limit=0`):',
      json: pretty(EXAMPLES.validationError),
    },
    {
      title: 'Not found',
      page: 'docs/errors-and-rate-limits.md',
      text: 'a missing, private, unlisted, draft or cancelled event alike (`401`, `403`, `429` and `500` have the same shape, with their messages `Not authenticated.`, `Insufficient API key scope.`, `Too many requests. Please try again later.`, `Internal server error.`):',
      json: pretty(EXAMPLES.notFound),
    },
  ];
}
