// One way of saying when, everywhere on the page: relative within the hour ("just now",
// "5 min ago"), the time of day for the rest of today ("14:05"), then "Yesterday 14:05", then
// the day and time ("28 Nov 14:05", with the year when it is not this one). Plain functions of
// the moment and now, so every place that shows a time agrees, and Node's runner tests them.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

function asDate(value) {
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

const sameDay = (a, b) => a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();

/** One formatter per locale and way of saying: making one costs about as much as 50 uses, and a
 *  page of messages says a hundred moments at once. */
const formatters = new Map();

function format(date, locale, options) {
  const key = `${locale ?? ""}|${JSON.stringify(options)}`;
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat(locale, options);
    formatters.set(key, formatter);
  }
  return formatter.format(date);
}

function timeOfDay(date, locale) {
  return format(date, locale, { hour: "2-digit", minute: "2-digit" });
}

/** When `value` (a Date, ISO text or milliseconds) was, said for a person, as of `now`. */
export function formatWhen(value, now = new Date(), locale = undefined) {
  const date = asDate(value);
  if (!date) return "";
  const current = asDate(now) ?? new Date();
  const ago = current.getTime() - date.getTime();
  if (ago >= -MINUTE && ago < MINUTE) return "just now";
  if (ago >= MINUTE && ago < HOUR) return `${Math.floor(ago / MINUTE)} min ago`;
  if (sameDay(date, current)) return timeOfDay(date, locale);
  const yesterday = new Date(current);
  yesterday.setDate(current.getDate() - 1);
  if (sameDay(date, yesterday)) return `Yesterday ${timeOfDay(date, locale)}`;
  const day = format(date, locale, {
    day: "numeric", month: "short", ...(date.getFullYear() === current.getFullYear() ? {} : { year: "numeric" }),
  });
  return `${day} ${timeOfDay(date, locale)}`;
}

/** The same, as a phrase after a verb: "at 14:05", "5 min ago", "just now". */
export function whenPhrase(value, now = new Date(), locale = undefined) {
  const text = formatWhen(value, now, locale);
  if (!text || text === "just now" || text.endsWith(" ago")) return text;
  return /^\d/.test(text) && text.length <= 5 ? `at ${text}` : `on ${text}`;
}

/** The day a chat view's heading names: "Today", "Yesterday", or the day. */
export function dayHeading(value, now = new Date(), locale = undefined) {
  const date = asDate(value);
  if (!date) return "";
  const current = asDate(now) ?? new Date();
  if (sameDay(date, current)) return "Today";
  const yesterday = new Date(current);
  yesterday.setDate(current.getDate() - 1);
  if (sameDay(date, yesterday)) return "Yesterday";
  return format(date, locale, {
    weekday: "long", day: "numeric", month: "long", ...(date.getFullYear() === current.getFullYear() ? {} : { year: "numeric" }),
  });
}

/** The exact moment, for a tooltip or Details: "28 Nov 2026, 14:05:09". */
export function exactTime(value, locale = undefined) {
  const date = asDate(value);
  if (!date) return "";
  return format(date, locale, { day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
}
