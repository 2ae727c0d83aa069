package dev.cairn.sim.runtime;

import java.util.Arrays;

/**
 * A binary min-heap of events ordered by (time, sequence), with the keys in arrays of their own: a sift
 * compares two longs in a row of memory instead of following a reference to each event, which made the
 * general {@link java.util.PriorityQueue} a visible share of a run. Keys are unique (the sequence is), so
 * the order is total and a run's order is the same as with any correct heap.
 */
final class EventQueue<E> {
    private long[] times = new long[1024];
    private long[] seqs = new long[1024];
    private Object[] items = new Object[1024];
    private int size;

    int size() { return size; }

    void add(long time, long seq, E e) {
        if (size == items.length) {
            int n = size * 2;
            times = Arrays.copyOf(times, n);
            seqs = Arrays.copyOf(seqs, n);
            items = Arrays.copyOf(items, n);
        }
        int i = size++;
        while (i > 0) { // sift up
            int parent = (i - 1) >>> 1;
            if (!less(time, seq, times[parent], seqs[parent])) break;
            move(parent, i);
            i = parent;
        }
        put(i, time, seq, e);
    }

    /** Time of the first event (the queue must not be empty). */
    long firstTime() {
        assert size > 0;
        return times[0];
    }

    /** Removes and returns the first event, or null if there is none. */
    @SuppressWarnings("unchecked")
    E poll() {
        if (size == 0) return null;
        E first = (E) items[0];
        int last = --size;
        long time = times[last], seq = seqs[last];
        Object e = items[last];
        items[last] = null;
        if (last > 0) { // sift the last one down from the root
            int i = 0;
            for (int child; (child = 2 * i + 1) < last; i = child) {
                if (child + 1 < last && less(times[child + 1], seqs[child + 1], times[child], seqs[child])) child++;
                if (!less(times[child], seqs[child], time, seq)) break;
                move(child, i);
            }
            times[i] = time;
            seqs[i] = seq;
            items[i] = e;
        }
        return first;
    }

    /** Removes every event {@code drop} accepts, then restores the heap (bottom-up, linear time). */
    @SuppressWarnings("unchecked")
    void removeIf(java.util.function.Predicate<? super E> drop) {
        int n = 0;
        for (int i = 0; i < size; i++) {
            if (drop.test((E) items[i])) continue;
            put(n++, times[i], seqs[i], items[i]);
        }
        Arrays.fill(items, n, size, null);
        size = n;
        for (int i = (n >>> 1) - 1; i >= 0; i--) siftDown(i);
    }

    private void siftDown(int i) {
        long time = times[i], seq = seqs[i];
        Object e = items[i];
        for (int child; (child = 2 * i + 1) < size; i = child) {
            if (child + 1 < size && less(times[child + 1], seqs[child + 1], times[child], seqs[child])) child++;
            if (!less(times[child], seqs[child], time, seq)) break;
            move(child, i);
        }
        put(i, time, seq, e);
    }

    private static boolean less(long t1, long s1, long t2, long s2) { return t1 < t2 || (t1 == t2 && s1 < s2); }

    private void move(int from, int to) {
        times[to] = times[from];
        seqs[to] = seqs[from];
        items[to] = items[from];
    }

    private void put(int i, long time, long seq, Object e) {
        times[i] = time;
        seqs[i] = seq;
        items[i] = e;
    }
}
