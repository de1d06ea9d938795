/**
 * The identifier formats (dataset contract, PRODUCT P3, P6), defined once for
 * the API's validation, the dataset loader, key management and the MCP adapter.
 */
export const USERNAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
export const EVENT_ID_PATTERN = /^evt_[A-Za-z0-9_-]{1,64}$/;
export const USER_ID_PATTERN = /^usr_[A-Za-z0-9_-]{1,64}$/;
/** The longest value each pattern above accepts: the bound the OpenAPI documents state as maxLength. */
export const USERNAME_MAX_LENGTH = 64;
export const EVENT_ID_MAX_LENGTH = 'evt_'.length + 64;
export const USER_ID_MAX_LENGTH = 'usr_'.length + 64;
/** What can be an API key at all: at least 20 visible ASCII characters (header-safe). */
export const PLAUSIBLE_KEY_PATTERN = /^[\x21-\x7e]{20,512}$/;
