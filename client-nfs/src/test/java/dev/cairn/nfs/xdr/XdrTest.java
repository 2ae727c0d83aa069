package dev.cairn.nfs.xdr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class XdrTest {
    @Test void roundTripsWithPadding() {
        SplittableRandom r = new SplittableRandom(3);
        for (int i = 0; i < 200; i++) {
            byte[] op = new byte[r.nextInt(40)];
            r.nextBytes(op);
            long l = r.nextLong();
            String s = "naïve-" + i;
            byte[] enc = new XdrEncoder().writeInt(i).writeLong(l).writeOpaque(op).writeString(s).writeBoolean(i % 2 == 0).toByteArray();
            assertThat(enc.length % 4).isZero();
            XdrDecoder d = new XdrDecoder(enc);
            assertThat(d.readInt()).isEqualTo(i);
            assertThat(d.readLong()).isEqualTo(l);
            assertThat(d.readOpaque(64)).isEqualTo(op);
            assertThat(d.readString(64)).isEqualTo(s);
            assertThat(d.readBoolean()).isEqualTo(i % 2 == 0);
            assertThat(d.remaining()).isZero();
        }
    }

    @Test void badInputIsAnXdrExceptionNeverAnAllocation() {
        byte[] huge = new XdrEncoder().writeInt(0x7fff_fff0).toByteArray();
        assertThatThrownBy(() -> new XdrDecoder(huge).readOpaque(1024)).isInstanceOf(XdrException.class).hasMessageContaining("exceeds");
        byte[] negative = new XdrEncoder().writeInt(-4).toByteArray();
        assertThatThrownBy(() -> new XdrDecoder(negative).readOpaque(1024)).isInstanceOf(XdrException.class);
        byte[] shortOpaque = new XdrEncoder().writeInt(8).writeInt(1).toByteArray();
        assertThatThrownBy(() -> new XdrDecoder(shortOpaque).readOpaque(1024)).isInstanceOf(XdrException.class).hasMessageContaining("truncated");
        byte[] padding = {0, 0, 0, 1, 'a', 1, 0, 0};
        assertThatThrownBy(() -> new XdrDecoder(padding).readOpaque(8)).isInstanceOf(XdrException.class).hasMessageContaining("padding");
        byte[] notUtf8 = new XdrEncoder().writeOpaque(new byte[] {(byte) 0xff, (byte) 0xfe}).toByteArray();
        assertThatThrownBy(() -> new XdrDecoder(notUtf8).readString(10)).isInstanceOf(XdrException.class).hasMessageContaining("UTF-8");
        assertThatThrownBy(() -> new XdrDecoder(new XdrEncoder().writeInt(2).toByteArray()).readBoolean()).isInstanceOf(XdrException.class);
    }
}
