/**
 * Many reads at once without running out of file descriptors: a history of a thousand records
 * read with one `Promise.all` holds a thousand files open (each read opens before any closes),
 * past macOS's default limit of 256 and near Linux's 1,024.
 */

/** Files a read of many at once keeps open at most. */
export const OPEN_FILES_AT_ONCE = 32;

/**
 * `items.map(work)` with at most `limit` calls running at once; the results in the order of
 * `items`. After a failure no new call starts, and it is thrown once the running ones end.
 */
export async function mapLimited<T, R>(items: readonly T[], work: (item: T) => Promise<R>, limit = OPEN_FILES_AT_ONCE): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  let failure: { readonly error: unknown } | undefined;
  const runner = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        results[index] = await work(items[index]!);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, runner));
  if (failure !== undefined) throw failure.error;
  return results;
}
