package org.cxrkg.server;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import org.neo4j.configuration.Config;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.QueryExecutionException;
import org.neo4j.io.ByteUnit;
import org.neo4j.io.fs.DefaultFileSystemAbstraction;
import org.neo4j.kernel.impl.security.User;
import org.neo4j.logging.InternalLog;
import org.neo4j.logging.NullLogProvider;
import org.neo4j.logging.log4j.Log4jLogProvider;
import org.neo4j.memory.EmptyMemoryTracker;
import org.neo4j.server.security.SecureHasher;
import org.neo4j.server.security.SystemGraphCredential;
import org.neo4j.server.security.auth.CommunitySecurityModule;
import org.neo4j.server.security.auth.FileUserRepository;
import org.neo4j.string.UTF8;

/**
 * Runs a Neo4j Community DBMS in this JVM until SIGTERM/SIGINT, for cxrkg's graph/server.py.
 *
 * <pre>
 * java -Xmx2g -jar graph/neo4j_server/target/cxrkg-neo4j-server.jar \
 *     --home DIR --data DIR --log-file FILE --password-file FILE \
 *     --bolt-port 7687 [--http-port 7474] [--page-cache 1g] [--tx-timeout 0s] [--lock-timeout 0s]
 * </pre>
 *
 * Bolt and HTTP listen on 127.0.0.1 only, authentication is on. Before the first start the
 * password file seeds user "neo4j" the way {@code neo4j-admin dbms set-initial-password} does, so
 * the default password "neo4j" is never accepted; on every later start ALTER USER re-applies it,
 * which keeps the password file the single source of truth. LOAD CSV may not read local files
 * (file:/// URLs): the server would read whatever its process can read.
 * An optional HOME/conf/neo4j.conf is read first; the options above override it.
 * Exit status: 143 after SIGTERM (stores closed by the shutdown hook), 1 when the DBMS could not
 * start, 2 on bad arguments.
 */
public final class LocalNeo4j {
    private static final String USER = "neo4j";

    private LocalNeo4j() {}

    public static void main(String[] argv) {
        Map<String, String> args;
        try {
            args = parseArgs(argv);
        } catch (IllegalArgumentException e) {
            System.err.println("LocalNeo4j: " + e.getMessage());
            System.exit(2);
            return;
        }
        Path home = Path.of(args.get("home")).toAbsolutePath();
        Path data = Path.of(args.getOrDefault("data", home.resolve("data").toString())).toAbsolutePath();
        Path logFile = Path.of(args.getOrDefault("log-file", home.resolve("logs/neo4j.log").toString())).toAbsolutePath();
        Path passwordFile = Path.of(args.get("password-file")).toAbsolutePath();
        int boltPort = Integer.parseInt(args.get("bolt-port"));
        int httpPort = Integer.parseInt(args.getOrDefault("http-port", "0"));

        OutputStream userLogStream;
        try {
            Files.createDirectories(logFile.getParent());
            // Append mode: graph/server.py points the JVM's stdout/stderr at the same file.
            userLogStream = new FileOutputStream(logFile.toFile(), true);
        } catch (IOException e) {
            System.err.println("LocalNeo4j: cannot open log file " + logFile + ": " + e);
            System.exit(1);
            return;
        }
        Log4jLogProvider userLogProvider = new Log4jLogProvider(userLogStream);
        InternalLog log = userLogProvider.getLog(LocalNeo4j.class);

        AtomicReference<DatabaseManagementService> started = new AtomicReference<>();
        CountDownLatch startupDone = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        // Registered before Neo4j starts, so that a SIGTERM arriving during startup still ends in a
        // clean shutdown (the hook waits for build() to return, then closes what it built).
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                startupDone.await();
                DatabaseManagementService dbms = started.get();
                if (dbms != null) {
                    log.info("LocalNeo4j: shutting down");
                    dbms.shutdown();
                    log.info("LocalNeo4j: stopped");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                userLogProvider.close();
                stopped.countDown();
            }
        }, "cxrkg-neo4j-shutdown"));

        boolean ok = false;
        try {
            String password = readPassword(passwordFile);
            boolean firstStart = !Files.exists(
                    data.resolve("databases").resolve(GraphDatabaseSettings.SYSTEM_DATABASE_NAME));
            if (firstStart) {
                seedInitialPassword(home, data, password);
            }
            DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home);
            Path conf = home.resolve("conf/neo4j.conf");
            if (Files.isRegularFile(conf)) {
                builder.loadPropertiesFromFile(conf);
            }
            builder.setConfig(configure(args, data, logFile.getParent(), boltPort, httpPort));
            builder.setUserLogProvider(userLogProvider);
            started.set(builder.build());
            if (!firstStart) {
                setPassword(started.get(), password, log);
            }
            log.info("LocalNeo4j: ready, bolt://127.0.0.1:" + boltPort
                    + (httpPort > 0 ? ", http://127.0.0.1:" + httpPort : "") + ", data in " + data);
            ok = true;
        } catch (Exception e) {
            log.error("LocalNeo4j: failed to start Neo4j: " + e, e);
        } finally {
            startupDone.countDown();
        }
        if (!ok) {
            System.exit(1); // the hook shuts down whatever did start
        }
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Map<org.neo4j.graphdb.config.Setting<?>, Object> configure(
            Map<String, String> args, Path data, Path logsDir, int boltPort, int httpPort) {
        String loopback = "127.0.0.1";
        Map<org.neo4j.graphdb.config.Setting<?>, Object> c = new HashMap<>();
        c.put(GraphDatabaseSettings.data_directory, data);
        c.put(GraphDatabaseSettings.logs_directory, logsDir);
        c.put(GraphDatabaseSettings.auth_enabled, true);
        // There is no internet here; the reporter would only log connection failures.
        c.put(GraphDatabaseSettings.udc_enabled, false);
        c.put(GraphDatabaseSettings.default_listen_address, new SocketAddress(loopback));
        c.put(GraphDatabaseSettings.default_advertised_address, new SocketAddress(loopback));
        c.put(BoltConnector.enabled, true);
        c.put(BoltConnector.listen_address, new SocketAddress(loopback, boltPort));
        c.put(BoltConnector.advertised_address, new SocketAddress(loopback, boltPort));
        c.put(HttpConnector.enabled, httpPort > 0);
        if (httpPort > 0) {
            c.put(HttpConnector.listen_address, new SocketAddress(loopback, httpPort));
            c.put(HttpConnector.advertised_address, new SocketAddress(loopback, httpPort));
        }
        c.put(HttpsConnector.enabled, false);
        // Neo4j waits 5 s each for Bolt threads and connections on shutdown; the databases are
        // already closed by then, so a shorter wait only makes `cxrkg db stop` faster.
        c.put(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofSeconds(1));
        c.put(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofSeconds(1));
        c.put(GraphDatabaseSettings.pagecache_memory, parseBytes(args.getOrDefault("page-cache", "1g")));
        // Neo4j keeps transaction logs for 2 days by default, for backups a Community server cannot
        // take: a day of benchmark loads filled 50 GB. Logs beyond 1 GB are pruned at checkpoints;
        // recovery after a crash needs only the logs since the last checkpoint, which are always kept.
        c.put(GraphDatabaseSettings.keep_logical_logs, "1G size");
        c.put(GraphDatabaseSettings.allow_file_urls, false);
        if (args.containsKey("tx-timeout")) {
            c.put(GraphDatabaseSettings.transaction_timeout, parseDuration(args.get("tx-timeout")));
        }
        if (args.containsKey("lock-timeout")) {
            c.put(GraphDatabaseSettings.lock_acquisition_timeout, parseDuration(args.get("lock-timeout")));
        }
        return c;
    }

    /** Writes data/dbms/auth.ini, which the system database reads once when it is created. */
    private static void seedInitialPassword(Path home, Path data, String password) throws Exception {
        Config config = Config.newBuilder()
                .set(GraphDatabaseSettings.neo4j_home, home)
                .set(GraphDatabaseSettings.data_directory, data)
                .build();
        Path authIni = CommunitySecurityModule.getInitialUserRepositoryFile(config);
        Files.createDirectories(authIni.getParent());
        Files.deleteIfExists(authIni);
        try (DefaultFileSystemAbstraction fs = new DefaultFileSystemAbstraction()) {
            FileUserRepository users = new FileUserRepository(
                    fs, authIni, NullLogProvider.getInstance(), EmptyMemoryTracker.INSTANCE);
            users.start();
            users.create(new User(USER, null,
                    SystemGraphCredential.createCredentialForPassword(UTF8.encode(password), new SecureHasher()),
                    false, false));
            users.shutdown();
        }
    }

    /**
     * Re-applies the password file on later starts, in case it was replaced (e.g. deleted, and
     * graph/server.py generated a new one). ALTER USER refuses a password equal to the current one.
     */
    private static void setPassword(DatabaseManagementService dbms, String password, InternalLog log) {
        try {
            dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                    "ALTER USER " + USER + " SET PASSWORD $password CHANGE NOT REQUIRED",
                    Map.of("password", password));
            log.info("LocalNeo4j: password of user '" + USER + "' set from the password file");
        } catch (QueryExecutionException e) {
            if (e.getMessage() == null || !e.getMessage().contains("cannot be the same")) {
                throw e;
            }
        }
    }

    private static String readPassword(Path file) throws IOException {
        String password = Files.readString(file, StandardCharsets.UTF_8).strip();
        if (password.isEmpty()) {
            throw new IOException("password file " + file + " is empty");
        }
        return password;
    }

    private static Map<String, String> parseArgs(String[] argv) {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i < argv.length; i += 2) {
            if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
                throw new IllegalArgumentException("expected --name value pairs, got " + String.join(" ", argv));
            }
            args.put(argv[i].substring(2), argv[i + 1]);
        }
        for (String required : new String[] {"home", "password-file", "bolt-port"}) {
            if (!args.containsKey(required)) {
                throw new IllegalArgumentException("missing --" + required);
            }
        }
        return args;
    }

    /** "1g", "512m", "300k" or a plain byte count. */
    static long parseBytes(String s) {
        String v = s.trim().toLowerCase();
        char unit = v.charAt(v.length() - 1);
        if (Character.isDigit(unit)) {
            return Long.parseLong(v);
        }
        long n = Long.parseLong(v.substring(0, v.length() - 1));
        switch (unit) {
            case 'k': return ByteUnit.kibiBytes(n);
            case 'm': return ByteUnit.mebiBytes(n);
            case 'g': return ByteUnit.gibiBytes(n);
            default: throw new IllegalArgumentException("bad size " + s);
        }
    }

    /** "30s", "5m", "0s" (0 means no timeout) or whole seconds. */
    static Duration parseDuration(String s) {
        String v = s.trim().toLowerCase();
        if (v.endsWith("ms")) return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
        if (v.endsWith("s")) return Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
        if (v.endsWith("m")) return Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
        if (v.endsWith("h")) return Duration.ofHours(Long.parseLong(v.substring(0, v.length() - 1)));
        return Duration.ofSeconds(Long.parseLong(v));
    }
}
