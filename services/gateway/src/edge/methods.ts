import type { Express, RequestHandler } from 'express';
import { ApiError } from '../errors/catalog.ts';

/**
 * The methods each path of the app answers, read from express's own route table (the routers
 * buildApp mounted), so the answers below follow the routes as they are: `Allow` lists a path's
 * methods, HEAD wherever GET is served (express answers it with the GET route) and OPTIONS.
 */
export type MethodsOf = (path: string) => readonly string[] | null;

interface Layer {
  slash?: boolean;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

// RFC 9110 §9: the methods in the order Allow lists them.
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** `/api/commands/:id` -> a matcher with express's defaults: case-insensitive, an optional trailing slash. */
function matcherOf(path: string): RegExp {
  if (!/^(\/([A-Za-z0-9._-]+|:[A-Za-z_]\w*))+$/.test(path))
    throw new Error(`methods.ts reads literal and :param segments only, not ${path}`);
  const body = path
    .split('/')
    .slice(1)
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/\./g, '\\.')))
    .join('/');
  return new RegExp(`^/${body}/?$`, 'i');
}

/** The route table of an app whose routers are all mounted at `/` (buildApp's); built at its first use, once every route exists. */
export function routeMethods(app: Express): MethodsOf {
  let table: Array<{ match: RegExp; methods: string[] }> | null = null;
  const build = (): Array<{ match: RegExp; methods: string[] }> => {
    const byPath = new Map<string, Set<string>>();
    const walk = (stack: Layer[]): void => {
      for (const layer of stack) {
        if (layer.route && typeof layer.route.path === 'string') {
          // router.all answers every method itself (the removed interfaces, D12): nothing to add.
          if (layer.route.methods['_all']) continue;
          const methods = byPath.get(layer.route.path) ?? new Set<string>();
          for (const m of Object.keys(layer.route.methods)) methods.add(m.toUpperCase());
          byPath.set(layer.route.path, methods);
        } else if (layer.handle?.stack) {
          if (!layer.slash) throw new Error('methods.ts reads routers mounted at / only');
          walk(layer.handle.stack);
        }
      }
    };
    walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
    return [...byPath].map(([path, methods]) => {
      if (methods.has('GET')) methods.add('HEAD');
      methods.add('OPTIONS');
      return { match: matcherOf(path), methods: ORDER.filter((m) => methods.has(m)) };
    });
  };
  return (path) => {
    table ??= build();
    const found = table.filter((r) => r.match.test(path));
    if (found.length === 0) return null;
    const all = new Set(found.flatMap((r) => r.methods));
    return ORDER.filter((m) => all.has(m));
  };
}

/**
 * OPTIONS on a path the gateway serves (RFC 9110 §9.3.7): 204 with `Allow`, and no CORS headers:
 * the API is for servers, its secrets are never in a browser (spec "Authentication"). An unknown
 * path goes on to the 404 of D11. Mounted before the routers, whose automatic answer it replaces.
 */
export function answerOptions(methodsOf: MethodsOf): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'OPTIONS') return next();
    const allowed = methodsOf(req.path);
    if (!allowed) return next();
    res.set('Allow', allowed.join(', ')).status(204).end();
  };
}

/**
 * A known path asked with a method it does not serve: 405 with `Allow` (RFC 9110 §15.5.6), in the
 * error shape of every refusal; an unknown path stays 404 (D11). Mounted after every router: no
 * route took the request, so no credential was asked for and none is needed for this answer.
 */
export function methodNotAllowed(methodsOf: MethodsOf): RequestHandler {
  return (req, _res, next) => {
    const allowed = methodsOf(req.path);
    if (!allowed || allowed.includes(req.method)) return next();
    const allow = allowed.join(', ');
    next(
      new ApiError(
        405,
        'method_not_allowed',
        { ok: false, error: `method ${req.method} not allowed on ${req.path}; allowed: ${allow}` },
        { Allow: allow },
      ),
    );
  };
}
