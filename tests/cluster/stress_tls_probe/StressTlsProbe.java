// cassandra-stress's TLS client path, from this machine, without the cassandra-stress tarball.
//
// cassandra-stress 5.0 turns `-transport truststore=F ssl-ciphers=C` and the credentials file's
// transport.truststore.password into EncryptionOptions (SettingsTransport.getEncryptionOptions:
// enabled, truststore, its password, protocol TLS, the ciphers, and the truststore again as the
// keystore when none is given), then SSLFactory.createSSLContext(options, true) and an SSLEngine
// with options.cipherSuitesArray() enabled (JavaDriverClient). This does the same with
// Cassandra's own classes, opens a TLS connection to a node and exchanges a native-protocol
// OPTIONS / SUPPORTED pair over it.
//
// Run in source-file mode on Cassandra's classpath:
//   java -cp <jars> StressTlsProbe.java HOST PORT TRUSTSTORE PASSWORD CIPHERS
// Prints one line: "ok <protocol> <cipher suite> opcode <n>" or "refused <exception>: <message>".

import java.io.DataInputStream;
import java.io.OutputStream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

import org.apache.cassandra.config.DatabaseDescriptor;
import org.apache.cassandra.config.EncryptionOptions;
import org.apache.cassandra.security.SSLFactory;

public class StressTlsProbe
{
    public static void main(String[] args) throws Exception
    {
        DatabaseDescriptor.clientInitialization();
        String host = args[0], truststore = args[2], password = args[3];
        int port = Integer.parseInt(args[1]);
        EncryptionOptions options = new EncryptionOptions().applyConfig()
                                    .withEnabled(true)
                                    .withTrustStore(truststore)
                                    .withTrustStorePassword(password)
                                    .withAlgorithm(null)
                                    .withProtocol("TLS")
                                    .withCipherSuites(args[4].split(","))
                                    .withKeyStore(truststore)
                                    .withKeyStorePassword(password);
        try
        {
            SSLContext context = SSLFactory.createSSLContext(options, true);
            try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(host, port))
            {
                socket.setEnabledCipherSuites(options.cipherSuitesArray());
                socket.setSoTimeout(10_000);
                socket.startHandshake();
                OutputStream out = socket.getOutputStream();
                out.write(new byte[]{ 4, 0, 0, 0, 5, 0, 0, 0, 0 });   // v4 OPTIONS, stream 0, no body
                out.flush();
                byte[] header = new byte[9];
                new DataInputStream(socket.getInputStream()).readFully(header);
                System.out.println("ok " + socket.getSession().getProtocol() + " " + socket.getSession().getCipherSuite()
                                   + " opcode " + header[4]);
            }
        }
        catch (Exception e)
        {
            Throwable root = e;
            while (root.getCause() != null)
                root = root.getCause();
            System.out.println("refused " + root.getClass().getSimpleName() + ": " + root.getMessage());
        }
        System.exit(0);
    }
}
