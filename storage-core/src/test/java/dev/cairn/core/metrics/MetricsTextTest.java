package dev.cairn.core.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MetricsTextTest {
    @Test void familiesAreDeclaredOnceAndLabelValuesEscaped() {
        MetricsText m = new MetricsText()
                .gauge("cairn_x", "An x", 3, "server", "cs\"1\\\n")
                .gauge("cairn_x", "An x", 0.25, "server", "cs2")
                .counter("cairn_y_total", "Ys", 7)
                .gauge("cairn_z", "Odd values", Double.NaN)
                .gauge("cairn_w", "Big", 1e20);
        assertThat(m.text()).isEqualTo("""
                # HELP cairn_x An x
                # TYPE cairn_x gauge
                cairn_x{server="cs\\"1\\\\\\n"} 3
                cairn_x{server="cs2"} 0.25
                # HELP cairn_y_total Ys
                # TYPE cairn_y_total counter
                cairn_y_total 7
                # HELP cairn_z Odd values
                # TYPE cairn_z gauge
                cairn_z NaN
                # HELP cairn_w Big
                # TYPE cairn_w gauge
                cairn_w 1.0E20
                """);
    }

    @Test void aHistogramIsCumulativeWithItsSumAndCount() {
        LatencyHistogram h = new LatencyHistogram();
        h.record(300_000);        // 0.3 ms: the first bucket
        h.record(2_000_000);      // 2 ms
        h.record(30_000_000_000L); // 30 s: past the last bound
        String t = new MetricsText().histogram("cairn_op_seconds", "Op time", java.util.List.of(new MetricsText.Series(h, "op", "READ"))).text();
        assertThat(t).startsWith("# HELP cairn_op_seconds Op time\n# TYPE cairn_op_seconds histogram\n")
                .contains("cairn_op_seconds_bucket{op=\"READ\",le=\"0.0005\"} 1\n", "cairn_op_seconds_bucket{op=\"READ\",le=\"0.001\"} 1\n",
                        "cairn_op_seconds_bucket{op=\"READ\",le=\"0.0025\"} 2\n", "cairn_op_seconds_bucket{op=\"READ\",le=\"10\"} 2\n",
                        "cairn_op_seconds_bucket{op=\"READ\",le=\"+Inf\"} 3\n", "cairn_op_seconds_sum{op=\"READ\"} 30.0023\n",
                        "cairn_op_seconds_count{op=\"READ\"} 3\n");
        assertThat(h.count()).isEqualTo(3);
    }

    @Test void malformedNamesLabelsAndScatteredFamiliesAreRefused() {
        assertThatThrownBy(() -> new MetricsText().gauge("1bad", "h", 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MetricsText().gauge("ok", "h", 1, "bad-label", "v")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MetricsText().gauge("ok", "h", 1, "odd")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MetricsText().counter("ok_count", "h", 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MetricsText().gauge("a", "h", 1).gauge("b", "h", 1).gauge("a", "h", 2)).isInstanceOf(IllegalStateException.class);
    }
}
