// The slice of `pg` (node-postgres 8) this project uses. pg ships no types and @types/pg would be
// one more package for five members; @keyv/postgres already depends on pg itself.
declare module 'pg' {
  export interface QueryResult<R = Record<string, unknown>> {
    rows: R[]
  }
  export interface PoolConfig {
    connectionString?: string
    max?: number
    connectionTimeoutMillis?: number
    idleTimeoutMillis?: number
    ssl?: unknown
  }
  export interface PoolClient {
    query<R = Record<string, unknown>>(sql: string, values?: unknown[]): Promise<QueryResult<R>>
    /** Pass an error (or true) to destroy the connection instead of returning it to the pool. */
    release(destroy?: Error | boolean): void
    on(event: 'error', listener: (err: Error) => void): this
    removeListener(event: 'error', listener: (err: Error) => void): this
  }
  export class Pool {
    constructor(config?: PoolConfig)
    query<R = Record<string, unknown>>(sql: string, values?: unknown[]): Promise<QueryResult<R>>
    connect(): Promise<PoolClient>
    end(): Promise<void>
    on(event: 'error', listener: (err: Error) => void): this
  }
  const pg: { Pool: typeof Pool }
  export default pg
}
