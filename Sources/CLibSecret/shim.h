// The freedesktop Secret Service client library (Debian: libsecret-1-dev). Only
// TroveSecretService imports it. The inline wrappers below exist because Swift cannot make
// these calls directly: a static SecretSchema, GHashTable attributes, GError handling and
// GObject reference counting. Each call opens its own connection to the service and releases
// it before returning.
#ifndef TROVE_CLIBSECRET_SHIM_H
#define TROVE_CLIBSECRET_SHIM_H

#include <libsecret/secret.h>
#include <string.h>

typedef enum {
    TROVE_SECRET_OK = 0,
    TROVE_SECRET_NOT_FOUND = 1,
    /// The item, or the collection a new item goes to, is locked.
    TROVE_SECRET_LOCKED = 2,
    /// No session bus, no Secret Service on it, no default collection, or a failed call.
    TROVE_SECRET_UNAVAILABLE = 3,
} trove_secret_status;

/// Items are found by `service` and `account` only (SECRET_SCHEMA_DONT_MATCH_NAME), so an item
/// another tool stored under the same names is found too, and refused by Trove as not a key.
static const SecretSchema trove_secret_schema = {
    "dev.trove.DatabaseKey",
    SECRET_SCHEMA_DONT_MATCH_NAME,
    {
        {"service", SECRET_SCHEMA_ATTRIBUTE_STRING},
        {"account", SECRET_SCHEMA_ATTRIBUTE_STRING},
        {NULL, 0},
    },
};

/// Sets `*message` to a copy of the error's message (free with g_free) and frees the error.
static inline void trove_secret_take_error(GError *error, const char *fallback, char **message) {
    *message = g_strdup(error != NULL ? error->message : fallback);
    if (error != NULL) g_error_free(error);
}

/// A new, unshared connection to the Secret Service with a session open (never libsecret's
/// process-wide default, so each call reads the session bus address anew and holds nothing
/// afterwards). The bus connection is told not to end the process when the bus goes away
/// (GDBus's default for message-bus connections).
static inline SecretService *trove_secret_open(char **message) {
    GError *error = NULL;
    SecretService *service =
        secret_service_open_sync(SECRET_TYPE_SERVICE, NULL, SECRET_SERVICE_OPEN_SESSION, NULL, &error);
    if (service == NULL) {
        trove_secret_take_error(error, "the Secret Service could not be reached", message);
        return NULL;
    }
    g_dbus_connection_set_exit_on_close(g_dbus_proxy_get_connection(G_DBUS_PROXY(service)), FALSE);
    return service;
}

static inline GHashTable *trove_secret_attributes(const char *service, const char *account) {
    GHashTable *attributes = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_insert(attributes, (gpointer) "service", (gpointer)service);
    g_hash_table_insert(attributes, (gpointer) "account", (gpointer)account);
    return attributes;
}

/// Whether item `a` was made before item `b`: by creation time (seconds), then by object path,
/// shorter first (the Secret Service numbers a collection's items as they are made, so this is
/// numeric order within one collection).
static inline int trove_secret_older(SecretItem *a, SecretItem *b) {
    guint64 created_a = secret_item_get_created(a), created_b = secret_item_get_created(b);
    if (created_a != created_b) return created_a < created_b;
    const char *path_a = g_dbus_proxy_get_object_path(G_DBUS_PROXY(a));
    const char *path_b = g_dbus_proxy_get_object_path(G_DBUS_PROXY(b));
    size_t length_a = strlen(path_a), length_b = strlen(path_b);
    if (length_a != length_b) return length_a < length_b;
    return strcmp(path_a, path_b) < 0;
}

/// The oldest of `items`. Several items with the same names exist only when two processes each
/// created the key of a new database at the same moment (items are created, never replaced):
/// every process then reads the oldest, the one the first of them read back and used, whatever
/// order the service returns them in.
static inline SecretItem *trove_secret_oldest(GList *items) {
    SecretItem *oldest = SECRET_ITEM(items->data);
    for (GList *node = items->next; node != NULL; node = node->next) {
        SecretItem *item = SECRET_ITEM(node->data);
        if (trove_secret_older(item, oldest)) oldest = item;
    }
    return oldest;
}

/// Looks up the secret of the item with these attributes without unlocking anything (a locked
/// item is reported, never prompted for). On TROVE_SECRET_OK, `*secret` and `*length` hold a
/// copy the caller frees with trove_secret_free; on UNAVAILABLE, `*message` says why (g_free).
static inline trove_secret_status trove_secret_lookup(const char *service_name, const char *account,
                                                      char **secret, size_t *length, char **message) {
    *secret = NULL;
    *length = 0;
    *message = NULL;
    SecretService *service = trove_secret_open(message);
    if (service == NULL) return TROVE_SECRET_UNAVAILABLE;
    GHashTable *attributes = trove_secret_attributes(service_name, account);
    GError *error = NULL;
    GList *items = secret_service_search_sync(service, &trove_secret_schema, attributes, SECRET_SEARCH_ALL, NULL, &error);
    trove_secret_status status = TROVE_SECRET_OK;
    if (error != NULL) {
        trove_secret_take_error(error, "the search failed", message);
        status = TROVE_SECRET_UNAVAILABLE;
    } else if (items == NULL) {
        status = TROVE_SECRET_NOT_FOUND;
    } else {
        SecretItem *item = trove_secret_oldest(items);
        if (secret_item_get_locked(item)) {
            status = TROVE_SECRET_LOCKED;
        } else if (!secret_item_load_secret_sync(item, NULL, &error)) {
            trove_secret_take_error(error, "the secret could not be read", message);
            status = TROVE_SECRET_UNAVAILABLE;
        } else {
            SecretValue *value = secret_item_get_secret(item);
            if (value == NULL) {
                *message = g_strdup("the item has no secret");
                status = TROVE_SECRET_UNAVAILABLE;
            } else {
                gsize size = 0;
                const gchar *bytes = secret_value_get(value, &size);
                *secret = g_malloc(size > 0 ? size : 1);
                memcpy(*secret, bytes, size);
                *length = size;
                secret_value_unref(value);
            }
        }
    }
    g_list_free_full(items, g_object_unref);
    g_hash_table_unref(attributes);
    g_object_unref(service);
    return status;
}

/// Creates an item with these attributes in the default collection ("login" in GNOME),
/// without unlocking it (a locked collection is reported, never prompted for).
static inline trove_secret_status trove_secret_store(const char *service_name, const char *account, const char *label,
                                                     const char *secret, size_t length, char **message) {
    *message = NULL;
    SecretService *service = trove_secret_open(message);
    if (service == NULL) return TROVE_SECRET_UNAVAILABLE;
    GError *error = NULL;
    trove_secret_status status = TROVE_SECRET_OK;
    SecretCollection *collection =
        secret_collection_for_alias_sync(service, SECRET_COLLECTION_DEFAULT, SECRET_COLLECTION_NONE, NULL, &error);
    if (collection == NULL) {
        trove_secret_take_error(error, "there is no default keyring", message);
        g_object_unref(service);
        return TROVE_SECRET_UNAVAILABLE;
    }
    if (secret_collection_get_locked(collection)) {
        status = TROVE_SECRET_LOCKED;
    } else {
        GHashTable *attributes = trove_secret_attributes(service_name, account);
        SecretValue *value = secret_value_new(secret, (gssize)length, "text/plain");
        SecretItem *item = secret_item_create_sync(collection, &trove_secret_schema, attributes, label, value,
                                                   SECRET_ITEM_CREATE_NONE, NULL, &error);
        if (item == NULL) {
            trove_secret_take_error(error, "the item could not be created", message);
            status = TROVE_SECRET_UNAVAILABLE;
        } else {
            g_object_unref(item);
        }
        secret_value_unref(value);
        g_hash_table_unref(attributes);
    }
    g_object_unref(collection);
    g_object_unref(service);
    return status;
}

/// Zeroes and frees a secret from trove_secret_lookup.
static inline void trove_secret_free(char *secret, size_t length) {
    if (secret == NULL) return;
    volatile char *p = secret;
    for (size_t i = 0; i < length; i++) p[i] = 0;
    g_free(secret);
}

#endif
