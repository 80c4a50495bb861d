// Placeholder: the coordination child is being written.
print("dk-coordination-child")
