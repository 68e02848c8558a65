/**
 * zod, loaded only when a value fails its check. Schemas are declared with this `z` exactly as
 * with zod's (the subset this project uses); each one also gets a plain-JavaScript check that
 * returns what zod would return for a value it accepts, so a valid session, sidecar or setting
 * never loads zod (about 95 modules, most of a small run's start-up). Anything the plain check is
 * not sure of — a failure, or a shape it does not model — goes to the real zod schema, built on
 * first use, which gives the result and every error message. So the plain check only has to be
 * right when it accepts; test/lazy-zod.test.ts compares both on random values.
 *
 * Leaves to zod: every error, every issue, async schemas, and whatever this subset lacks (a zod
 * function missing here fails at the schema's declaration, where it is seen at once).
 */
import { createRequire } from 'node:module';
import type { z as Zod } from 'zod';

/** What the plain check returns when it cannot answer: zod decides. */
const UNSURE: unique symbol = Symbol('unsure');
type Check = (value: unknown) => unknown;
type Real = Zod.ZodType;

let zod: typeof Zod | undefined;
/** The real zod, loaded synchronously on first need (its CommonJS build). */
function realZod(): typeof Zod {
  zod ??= (createRequire(import.meta.url)('zod') as { z: typeof Zod }).z;
  return zod;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const hasOwn = Object.prototype.hasOwnProperty;

/** A lazy schema's real zod schema (arrays and shapes of them mapped through). */
function toReal(value: unknown): unknown {
  if (value instanceof Lazy) return value.real;
  if (Array.isArray(value)) return value.map(toReal);
  if (isObject(value) && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = toReal(value[key]);
    return out;
  }
  return value;
}

/** How an object key's absence is read (zod's optin/optout). */
type OptIn = 'optional' | 'defaulted' | undefined;
type OptOut = 'optional' | undefined;

interface Spec {
  /** The plain check: zod's output for a value it accepts, or UNSURE. */
  readonly check: Check;
  /** True only when zod certainly rejects this value (a union moves on to its next option). */
  readonly rejects: (value: unknown) => boolean;
  readonly build: () => Real;
  readonly optin?: OptIn;
  readonly optout?: OptOut;
  /** An object schema's shape and unknown-key rule, for .partial(), .strict() and discriminated unions. */
  readonly shape?: Readonly<Record<string, Lazy>>;
  readonly unknownKeys?: 'strip' | 'passthrough' | 'strict';
  /** A literal's or an enum's values. */
  readonly values?: readonly unknown[];
}

const never = () => false;

/** A context for a transform or refinement: any issue makes the plain check unsure. */
class IssueCatcher {
  failed = false;
  readonly issues: unknown[] = [];
  constructor(readonly value: unknown) {}
  addIssue(): void {
    this.failed = true;
  }
}

class Lazy {
  #real: Real | undefined;
  constructor(readonly spec: Spec) {}

  /** The real zod schema (loads zod). */
  get real(): Real {
    this.#real ??= this.spec.build();
    return this.#real;
  }

  safeParse(value: unknown): unknown {
    const out = this.spec.check(value);
    if (out !== UNSURE) return { success: true, data: out };
    return this.real.safeParse(value);
  }

  parse(value: unknown): unknown {
    const out = this.spec.check(value);
    return out !== UNSURE ? out : this.real.parse(value);
  }

  /** A new schema: this one's check then `more` on its output; built as `method(...args)` on the real one. */
  #then(method: string, args: unknown[], more: (value: unknown) => boolean | typeof UNSURE, keep: Partial<Spec> = {}): Lazy {
    const { check, rejects } = this.spec;
    return new Lazy({
      ...this.spec,
      ...keep,
      check: (value) => {
        const out = check(value);
        return out === UNSURE || more(out) !== true ? UNSURE : out;
      },
      rejects,
      build: () => (this.real as unknown as Record<string, (...a: unknown[]) => Real>)[method]!(...(args.map(toReal) as unknown[])),
    });
  }

  min(n: number, message?: unknown): Lazy {
    return this.#then('min', message === undefined ? [n] : [n, message], (v) => (typeof v === 'string' || Array.isArray(v) ? v.length >= n : (v as number) >= n));
  }
  int(): Lazy {
    return this.#then('int', [], (v) => Number.isSafeInteger(v));
  }
  nonnegative(): Lazy {
    return this.#then('nonnegative', [], (v) => (v as number) >= 0);
  }
  positive(): Lazy {
    return this.#then('positive', [], (v) => (v as number) > 0);
  }
  regex(pattern: RegExp, message?: unknown): Lazy {
    return this.#then('regex', message === undefined ? [pattern] : [pattern, message], (v) => {
      pattern.lastIndex = 0;
      return pattern.test(v as string);
    });
  }
  superRefine(refinement: (value: unknown, context: IssueCatcher) => unknown): Lazy {
    return this.#then('superRefine', [refinement], (v) => {
      const context = new IssueCatcher(v);
      const result = refinement(v, context);
      return !context.failed && !(result instanceof Promise);
    });
  }

  transform(fn: (value: unknown, context: IssueCatcher) => unknown): Lazy {
    const { check } = this.spec;
    return new Lazy({
      check: (value) => {
        const out = check(value);
        if (out === UNSURE) return UNSURE;
        const context = new IssueCatcher(out);
        const result = fn(out, context);
        return context.failed || result instanceof Promise ? UNSURE : result;
      },
      rejects: this.spec.rejects,
      build: () => this.real.transform(fn as never),
      optin: this.spec.optin,
      optout: undefined,
    });
  }

  optional(): Lazy {
    return optionalOf(this);
  }
  nullable(): Lazy {
    const { check, rejects } = this.spec;
    return new Lazy({
      check: (value) => (value === null ? null : check(value)),
      rejects: (value) => value !== null && rejects(value),
      build: () => this.real.nullable(),
      optin: this.spec.optin,
      optout: this.spec.optout,
    });
  }
  nullish(): Lazy {
    return this.nullable().optional();
  }
  default(value: unknown): Lazy {
    // zod hands out a shallow copy of an array or plain object default; anything else (a
    // function, a class instance) is left to zod.
    const copy: (() => unknown) | undefined =
      value === null || typeof value !== 'object' ? () => value
      : Array.isArray(value) ? () => [...(value as unknown[])]
      : Object.getPrototypeOf(value) === Object.prototype ? () => ({ ...(value as object) })
      : undefined;
    const { check } = this.spec;
    const fallback = (): unknown => (copy ? copy() : UNSURE);
    return new Lazy({
      check: (input) => {
        if (input === undefined) return fallback();
        const out = check(input);
        return out === undefined ? fallback() : out;
      },
      rejects: (input) => input !== undefined && this.spec.rejects(input),
      build: () => this.real.default(value as never),
      optin: 'defaulted',
      optout: undefined,
    });
  }
  catch(value: unknown): Lazy {
    // A value the inner schema rejects is zod's to replace (it also reports nothing): unsure here.
    return new Lazy({
      check: this.spec.check,
      rejects: never,
      build: () => this.real.catch(value as never),
      optin: this.spec.optin === 'defaulted' ? 'defaulted' : 'optional',
      optout: this.spec.optout,
    });
  }

  partial(): Lazy {
    const shape = this.spec.shape!;
    const partialShape: Record<string, Lazy> = {};
    for (const key of Object.keys(shape)) partialShape[key] = optionalOf(shape[key]!);
    return objectOf(partialShape, this.spec.unknownKeys!, () => (this.real as unknown as { partial(): Real }).partial());
  }
  strict(): Lazy {
    return objectOf(this.spec.shape!, 'strict', () => (this.real as unknown as { strict(): Real }).strict());
  }
}

function optionalOf(inner: Lazy): Lazy {
  const { check, rejects, optin } = inner.spec;
  return new Lazy({
    check: (value) => (value === undefined ? (optin === 'defaulted' ? check(value) : undefined) : check(value)),
    rejects: (value) => value !== undefined && rejects(value),
    build: () => inner.real.optional(),
    optin: optin === 'defaulted' ? 'defaulted' : 'optional',
    optout: 'optional',
  });
}

/** A schema of one JavaScript type, with nothing to copy: the value itself when `accepts`. */
function leaf(accepts: (value: unknown) => boolean, build: () => Real, extra: Partial<Spec> = {}): Lazy {
  return new Lazy({ check: (value) => (accepts(value) ? value : UNSURE), rejects: (value) => !accepts(value), build, ...extra });
}

/**
 * An object schema. zod builds a new object: the shape's keys in the shape's order (an absent
 * optional key left out, an absent defaulted one filled in), then for a loose object every
 * other key in the input's order.
 */
function objectOf(shape: Readonly<Record<string, Lazy>>, unknownKeys: 'strip' | 'passthrough' | 'strict', build: () => Real): Lazy {
  const keys = Object.keys(shape);
  const known = new Set(keys);
  const specs = keys.map((key) => shape[key]!.spec);
  const check: Check = (input) => {
    // An own __proto__ (JSON.parse makes one) is zod's to skip or report.
    if (!isObject(input) || hasOwn.call(input, '__proto__')) return UNSURE;
    const out: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const spec = specs[i]!;
      if (key in input) {
        const value = spec.check(input[key]);
        if (value === UNSURE) return UNSURE;
        out[key] = value;
        continue;
      }
      // Absent: optional in and out leaves it out; anything else is decided on undefined.
      if (spec.optin === undefined) return UNSURE;
      if (spec.optin === 'optional' && spec.optout === 'optional') continue;
      const value = spec.check(undefined);
      if (value === UNSURE) return UNSURE;
      if (value !== undefined) out[key] = value;
      else if (spec.optin === 'defaulted' && spec.optout !== 'optional') out[key] = undefined;
    }
    if (unknownKeys === 'strip') return out;
    for (const key in input) {
      if (known.has(key)) continue;
      if (unknownKeys === 'strict') return UNSURE;
      out[key] = input[key];
    }
    return out;
  };
  return new Lazy({ check, rejects: (value) => !isObject(value), build, shape, unknownKeys });
}

/** Maps a shape of lazy schemas to real ones when zod is needed. */
const realShape = (shape: Record<string, Lazy>) => toReal(shape) as Record<string, Real>;

/** The subset of zod's `z` this project uses, same names, same arguments. */
const lazy = {
  string: () => leaf((v) => typeof v === 'string', () => realZod().string()),
  number: () => leaf((v) => typeof v === 'number' && Number.isFinite(v), () => realZod().number()),
  boolean: () => leaf((v) => typeof v === 'boolean', () => realZod().boolean()),
  null: () => leaf((v) => v === null, () => realZod().null()),
  unknown: () => new Lazy({ check: (v) => v, rejects: never, build: () => realZod().unknown() }),
  /** A URL's rules are zod's alone: only its type is known here. */
  url: (params?: unknown) => new Lazy({ check: () => UNSURE, rejects: (v) => typeof v !== 'string', build: () => realZod().url(params as never) }),
  literal: (value: unknown) => leaf((v) => v === value, () => realZod().literal(value as never), { values: [value] }),
  enum: (values: readonly unknown[]) => {
    const set = new Set(values);
    return leaf((v) => set.has(v), () => realZod().enum(values as never), { values });
  },
  object: (shape: Record<string, Lazy>) => objectOf(shape, 'strip', () => realZod().object(realShape(shape))),
  looseObject: (shape: Record<string, Lazy>) => objectOf(shape, 'passthrough', () => realZod().looseObject(realShape(shape))),
  array: (element: Lazy) => {
    const { check } = element.spec;
    return new Lazy({
      check: (input) => {
        if (!Array.isArray(input)) return UNSURE;
        const out = new Array<unknown>(input.length);
        for (let i = 0; i < input.length; i++) {
          const value = check(input[i]);
          if (value === UNSURE) return UNSURE;
          out[i] = value;
        }
        return out;
      },
      rejects: (v) => !Array.isArray(v),
      build: () => realZod().array(element.real),
    });
  },
  /** A record of string keys; zod copies each own key in order. */
  record: (key: Lazy, value: Lazy) => {
    const checkKey = key.spec.check;
    const checkValue = value.spec.check;
    return new Lazy({
      check: (input) => {
        if (!isObject(input) || Object.getPrototypeOf(input) !== Object.prototype || hasOwn.call(input, '__proto__') || hasOwn.call(input, 'constructor')) return UNSURE;
        if (Object.getOwnPropertySymbols(input).length > 0) return UNSURE;
        const out: Record<string, unknown> = {};
        for (const name of Object.keys(input)) {
          if (checkKey(name) !== name) return UNSURE;
          const result = checkValue(input[name]);
          if (result === UNSURE) return UNSURE;
          out[name] = result;
        }
        return out;
      },
      rejects: (v) => !isObject(v),
      build: () => realZod().record(key.real as never, value.real),
    });
  },
  /** The first option that accepts, as zod tries them in order; unsure when an earlier one might have. */
  union: (options: readonly Lazy[]) =>
    new Lazy({
      check: (input) => {
        for (const option of options) {
          const out = option.spec.check(input);
          if (out !== UNSURE) return out;
          if (!option.spec.rejects(input)) return UNSURE;
        }
        return UNSURE;
      },
      rejects: (v) => options.every((option) => option.spec.rejects(v)),
      build: () => realZod().union(options.map((option) => option.real) as never),
      optin: options.some((option) => option.spec.optin === 'defaulted') ? 'defaulted' : options.some((option) => option.spec.optin !== undefined) ? 'optional' : undefined,
      optout: options.some((option) => option.spec.optout === 'optional') ? 'optional' : undefined,
    }),
  /** The option whose literal matches the discriminator. */
  discriminatedUnion: (discriminator: string, options: readonly Lazy[]) => {
    const byValue = new Map<unknown, Lazy>();
    for (const option of options) for (const value of option.spec.shape?.[discriminator]?.spec.values ?? []) byValue.set(value, option);
    return new Lazy({
      check: (input) => (isObject(input) ? (byValue.get(input[discriminator])?.spec.check(input) ?? UNSURE) : UNSURE),
      rejects: (v) => !isObject(v),
      build: () => realZod().discriminatedUnion(discriminator, options.map((option) => option.real) as never),
    });
  },
  /** zod's marker for a failed transform (its value is never read once an issue is added). */
  NEVER: Object.freeze({ status: 'aborted' }) as never,
};

/**
 * For tests: what the plain check makes of `value` (`sure` false: it leaves the value to zod),
 * and the real zod schema behind a lazy one.
 */
export function withoutZod(schema: unknown, value: unknown): { readonly sure: boolean; readonly data?: unknown } {
  const out = (schema as Lazy).spec.check(value);
  return out === UNSURE ? { sure: false } : { sure: true, data: out };
}
export const realSchema = (schema: unknown): Real => (schema as Lazy).real;

/** Declared like zod's `z` (types included), built lazily. */
export const z = lazy as unknown as typeof Zod;
// eslint-disable-next-line @typescript-eslint/no-namespace
export declare namespace z {
  export type infer<T> = Zod.infer<T>;
  export type output<T> = Zod.output<T>;
  export type ZodType<Output = unknown, Input = unknown> = Zod.ZodType<Output, Input>;
  export type ZodError<T = unknown> = Zod.ZodError<T>;
}
