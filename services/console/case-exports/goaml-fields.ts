import { createHash } from 'node:crypto';
import { leaf, type XmlNode } from './xml-writer.ts';
import type { StoredPartyData } from '../../../schemas/families/stored.ts';

// goAML field values from our data: limits, dates, names, and the person and entity elements of
// a party. goAML's limits count characters (code points); "-" is its "unknown".

// goAML's "unknown" for a lookup code or a mandatory text we do not hold.
export const UNKNOWN = '-';
// Cut to a goAML length (counted in characters, not UTF-16 units), marked with "…".
export function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

// An id that must fit a goAML field: as it is when it fits, else its SHA-256 (never a cut id,
// which could name another record).
export function idWithin(id: string, max: number): string {
  return Array.from(id).length <= max ? id : `sha256:${createHash('sha256').update(id).digest('hex')}`;
}

// goAML dates are SQL Server datetimes: no zone, so always UTC.
export const sqlDate = (at: Date | string): string => new Date(at).toISOString().slice(0, 19);

// A legal name as goAML's first and last name: the last word is the last name, the rest the
// first name; a one-word name has an unknown first name.
export function splitName(name: string | undefined): { first: string; last: string } {
  const words = (name ?? '').trim().split(/\s+/).filter((w) => w.length > 0);
  if (words.length === 0) return { first: UNKNOWN, last: UNKNOWN };
  if (words.length === 1) return { first: UNKNOWN, last: clip(words[0]!, 100) };
  return { first: clip(words.slice(0, -1).join(' '), 100), last: clip(words.at(-1)!, 100) };
}

export const legalName = (party: StoredPartyData | undefined): string | undefined =>
  Array.isArray(party?.legal_names) && typeof party.legal_names[0] === 'string' ? party.legal_names[0] : undefined;
export const isPerson = (party: StoredPartyData | undefined) => party?.type === 'person';
export const dateOnly = (value: unknown) => (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value) && value >= '1753' ? sqlDate(value.slice(0, 10)) : undefined);
export const country = (value: unknown) => (typeof value === 'string' && /^[A-Z]{2}$/.test(value) ? value : undefined);

export function person(partyId: string, party: StoredPartyData | undefined): XmlNode[] {
  const name = splitName(legalName(party));
  const nationality = country(party?.jurisdictions?.nationality);
  const residence = country(party?.jurisdictions?.residency);
  return [
    leaf('first_name', name.first),
    leaf('last_name', name.last),
    dateOnly(party?.birth_or_inc_date) !== undefined && leaf('birthdate', dateOnly(party?.birth_or_inc_date)!),
    nationality !== undefined && leaf('nationality1', nationality),
    residence !== undefined && leaf('residence', residence),
    typeof party?.occupation === 'string' && party.occupation.trim() !== '' && leaf('occupation', clip(party.occupation, 255)),
    leaf('comments', partyRef(partyId)),
  ].filter((n): n is XmlNode => Boolean(n));
}

export function entity(partyId: string, party: StoredPartyData | undefined): XmlNode[] {
  const registration = country(party?.jurisdictions?.registration);
  return [
    leaf('name', clip(legalName(party)?.trim() || UNKNOWN, 255)),
    registration !== undefined && leaf('incorporation_country_code', registration),
    dateOnly(party?.birth_or_inc_date) !== undefined && leaf('incorporation_date', dateOnly(party?.birth_or_inc_date)!),
    leaf('comments', partyRef(partyId)),
  ].filter((n): n is XmlNode => Boolean(n));
}

// Our id of a party, in the person's or entity's comments: the FIU's way back to the record.
const partyRef = (partyId: string) => clip(`party id: ${partyId}`, 8000);
