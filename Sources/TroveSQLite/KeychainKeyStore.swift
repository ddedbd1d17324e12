#if canImport(Security)
    import Foundation
    import Security

    /// The Keychain of Apple platforms as a ``KeyStore``: generic-password items, found by their
    /// service and account.
    ///
    /// Items are readable after the device's first unlock since it started
    /// (`kSecAttrAccessibleAfterFirstUnlock`), so background work can open the database, and travel
    /// with encrypted backups as the database file does. Everything else (the item's format, finding
    /// or creating the key) is Trove's shared code, the same for every store.
    ///
    /// ```swift
    /// let database = try Database(
    ///     path: path, encryption: .keyStore(KeychainKeyStore(), service: "com.example.notes", account: "notes.trove"))
    /// ```
    public struct KeychainKeyStore: KeyStore {
        /// The keychain access group items go to (shared between an app and its extensions), or nil
        /// for the app's default.
        public let accessGroup: String?

        /// A Keychain store.
        ///
        /// - Parameter accessGroup: the access group, or nil for the app's default.
        public init(accessGroup: String? = nil) {
            self.accessGroup = accessGroup
        }

        public var name: String { "the Keychain" }

        public func secret(service: String, account: String) throws -> Data? {
            var query = baseQuery(service: service, account: account)
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            if status == errSecItemNotFound { return nil }
            try check(status)
            return result as? Data
        }

        public func addSecret(_ secret: Data, service: String, account: String, label: String)
            throws
        {
            var item = baseQuery(service: service, account: account)
            item[kSecValueData as String] = secret
            item[kSecAttrLabel as String] = label
            item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
            let status = SecItemAdd(item as CFDictionary, nil)
            // another process stored one first: keep it
            if status == errSecDuplicateItem { return }
            try check(status)
        }

        private func baseQuery(service: String, account: String) -> [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        private func check(_ status: OSStatus) throws {
            switch status {
            case errSecSuccess:
                return
            case errSecInteractionNotAllowed:  // the device is locked (before its first unlock)
                throw EncryptionError.keyStoreLocked(store: name)
            default:
                let message =
                    SecCopyErrorMessageString(status, nil) as String? ?? "OSStatus \(status)"
                throw EncryptionError.keyStoreUnavailable(store: name, reason: message)
            }
        }
    }
#endif
